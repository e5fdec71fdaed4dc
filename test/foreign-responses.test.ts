// Responses from other fetch implementations: @whatwg-node/fetch's (what
// graphql-yoga's `yoga.fetch(c.req.raw, c.env)` returns inside a Hono
// route), npm undici's, and another realm's (node:vm). None is `instanceof
// Response` here; @hono/node-server serves them all, and so does the plugin,
// through the usual guards. Compared with @hono/node-server itself.
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { Response as WhatwgResponse } from '@whatwg-node/fetch'
import { Response as UndiciResponse } from 'undici'
import { listen, rawRequest } from './helpers/net'
import { appHeaders, nodeServerPort, referenceUnavailable } from './helpers/reference'

const FIXTURE = 'foreign-responses-app.mjs'

async function servers (t: Tap.Test): Promise<{ fast: number, viaReply: number, reference: number }> {
  const { createForeignApp } = await import(join(__dirname, 'fixtures', FIXTURE))
  const fast = Fastify()
  await fast.register(fastifyHono, { app: createForeignApp(), prefix: '/h' })
  // An onSend hook sends every response through reply.send.
  const viaReply = Fastify()
  viaReply.addHook('onSend', async (request, reply, payload) => payload)
  await viaReply.register(fastifyHono, { app: createForeignApp(), prefix: '/h' })
  t.teardown(() => fast.close())
  t.teardown(() => viaReply.close())
  const reference = await nodeServerPort(t, FIXTURE, 'createForeignApp')
  return { fast: (await listen(fast)).port, viaReply: (await listen(viaReply)).port, reference }
}

test('@whatwg-node/fetch, undici and vm-realm Responses are served as @hono/node-server serves them', { skip: referenceUnavailable() }, async (t) => {
  const { fast, viaReply, reference } = await servers(t)
  const cases: Array<[string, string, string]> = [
    ['GET', '/whatwg/text', ''],
    ['POST', '/whatwg/yoga', '{ hello }'],
    ['GET', '/whatwg/stream', ''],
    ['GET', '/whatwg/cookies', ''],
    ['GET', '/whatwg/no-content', ''],
    ['GET', '/whatwg/after-middleware', ''],
    ['GET', '/undici/text', ''],
    ['GET', '/undici/stream', ''],
    ['GET', '/undici/after-middleware', ''],
    ['GET', '/vm/text', ''],
    ['GET', '/vm/stream', ''],
    ['GET', '/vm/cookies', ''],
    ['GET', '/vm/after-middleware', '']
  ]
  for (const [method, path, body] of cases) {
    const expected = await rawRequest(reference, method, path, { body })
    for (const [name, port] of [['fast', fast], ['reply.send', viaReply]] as const) {
      const res = await rawRequest(port, method, '/h' + path, { body })
      t.equal(res.status, expected.status, `${name} ${path}: status ${expected.status}`)
      t.same(appHeaders(res), appHeaders(expected), `${name} ${path}: the same headers as node-server`)
      t.equal(res.body, expected.body, `${name} ${path}: body`)
    }
  }
  // Spelled out, for the cases that matter most.
  const yoga = await rawRequest(fast, 'POST', '/h/whatwg/yoga', { body: '{ hello }' })
  t.equal(yoga.status, 200)
  t.same(yoga.headers['content-type'], ['application/graphql-response+json; charset=utf-8'])
  t.equal(yoga.body, '{"data":{"echo":"{ hello }"}}')
  const cookies = await rawRequest(fast, 'GET', '/h/whatwg/cookies')
  t.same(cookies.headers['set-cookie'], ['a=1; Path=/', 'b=2, with comma; Path=/'], 'each cookie on its own line, commas kept')
  const stream = await rawRequest(fast, 'GET', '/h/vm/stream')
  t.equal(stream.framing, 'chunked', 'a live foreign stream streams')
  t.equal(stream.body, 'one;two;three;')
})

test('a foreign Response meets the usual guards: a consumed body, a bad header, no Response at all', async (t) => {
  const { vmResponseClass } = await import(join(__dirname, 'fixtures', FIXTURE))
  const VmResponse = vmResponseClass()
  const app = new Hono()
  // (@whatwg-node/fetch's Response can be read again and never says bodyUsed: node-server and the plugin serve it.)
  app.get('/reread-whatwg', async () => {
    const res = new WhatwgResponse('read already')
    await res.text()
    return res
  })
  app.get('/consumed-vm', () => {
    const res = new VmResponse(['read already'])
    res.bodyUsed = true
    return res
  })
  app.get('/consumed-undici', async () => {
    const res = new UndiciResponse('read already')
    await res.text()
    return res
  })
  app.get('/bad-header', () => ({ status: 200, headers: new Map([['x-bad', 'a\nb']]) as unknown as Headers, body: null }) as unknown as Response)
  app.get('/not-a-response', () => ({ status: 200, body: null }) as unknown as Response)
  // A Response-shaped object whose body is a Node stream (async iterable, no getReader()), with string and byte chunks.
  app.get('/node-stream', () => ({
    status: 200,
    headers: new Map([['content-type', 'text/plain; charset=utf-8']]),
    body: Readable.from(['héllo ', Buffer.from('wörld')])
  }) as unknown as Response)
  app.get('/head-stream', () => new UndiciResponse(new ReadableStream({ start (c) { c.enqueue(new Uint8Array([104, 105])); c.close() } })))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/h' })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  t.equal((await rawRequest(port, 'GET', '/h/reread-whatwg')).body, 'read already')
  for (const path of ['/consumed-vm', '/consumed-undici']) {
    const res = await rawRequest(port, 'GET', '/h' + path)
    t.equal(res.status, 500, `${path}: 500`)
    t.match(JSON.parse(res.body), { code: 'FST_ERR_REP_RESPONSE_BODY_CONSUMED' }, `${path}: Fastify's consumed-body error`)
  }
  const bad = await rawRequest(port, 'GET', '/h/bad-header')
  t.equal(bad.status, 500, 'a header Headers would refuse: 500')
  const none = await rawRequest(port, 'GET', '/h/not-a-response')
  t.equal(none.status, 500)
  t.match(JSON.parse(none.body), { code: 'FST_ERR_HONO_INVALID_RESPONSE' }, 'an object without a Response\'s shape is still refused')
  const nodeStream = await fetch(`http://127.0.0.1:${port}/h/node-stream`)
  t.equal(nodeStream.status, 200)
  t.equal(await nodeStream.text(), 'héllo wörld', 'a Node stream body, read by async iteration')
  const head = await rawRequest(port, 'HEAD', '/h/head-stream')
  t.equal(head.status, 200, 'HEAD with a foreign stream body')
  t.equal(head.body, '')
  const get = await rawRequest(port, 'GET', '/h/head-stream')
  t.equal(get.body, 'hi')
})
