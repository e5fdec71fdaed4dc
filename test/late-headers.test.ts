// Headers set after the body was built: a Headers object passed as
// init.headers is kept by the Response, as @hono/node-server's Response keeps
// it, so `c.header()` after `c.body()` (serveStatic's documented onFound does
// just that) reaches the wire. Compared with @hono/node-server itself.
import { join } from 'node:path'
import { test } from 'tap'
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest } from './helpers/net'
import { appHeaders, nodeServerPort, referenceUnavailable } from './helpers/reference'

const FIXTURE = 'late-headers-app.mjs'

async function servers (t: Tap.Test, staticRoot: string): Promise<{ fast: number, viaReply: number, reference: number }> {
  const { createLateHeadersApp } = await import(join(__dirname, 'fixtures', FIXTURE))
  const fast = Fastify()
  await fast.register(fastifyHono, { app: createLateHeadersApp(staticRoot), prefix: '/h' })
  // An onSend hook sends every response through reply.send.
  const viaReply = Fastify()
  viaReply.addHook('onSend', async (request, reply, payload) => payload)
  await viaReply.register(fastifyHono, { app: createLateHeadersApp(staticRoot), prefix: '/h' })
  t.teardown(() => fast.close())
  t.teardown(() => viaReply.close())
  const reference = await nodeServerPort(t, FIXTURE, 'createLateHeadersApp', [staticRoot])
  return { fast: (await listen(fast)).port, viaReply: (await listen(viaReply)).port, reference }
}

test("serveStatic's onFound header reaches the wire: GET, HEAD and a range, as with @hono/node-server", { skip: referenceUnavailable() }, async (t) => {
  const dir = t.testdir({ static: { 'file.txt': 'static file body\n' } })
  const { fast, viaReply, reference } = await servers(t, dir)
  const cases: Array<[string, Record<string, string>, number]> = [['GET', {}, 200], ['HEAD', {}, 200], ['GET', { range: 'bytes=7-10' }, 206]]
  for (const [method, headers, status] of cases) {
    const what = `${method} ${JSON.stringify(headers)}`
    const expected = await rawRequest(reference, method, '/static/file.txt', { headers })
    t.equal(expected.status, status, `${what}: node-server's status`)
    t.same(expected.headers['cache-control'], ['public, max-age=60'], `${what}: node-server sends it`)
    for (const [name, port] of [['fast', fast], ['reply.send', viaReply]] as const) {
      const res = await rawRequest(port, method, '/h/static/file.txt', { headers })
      t.equal(res.status, status, `${name} ${what}: status`)
      t.same(res.headers['cache-control'], ['public, max-age=60'], `${name} ${what}: the onFound header`)
      t.same(appHeaders(res), appHeaders(expected), `${name} ${what}: the same headers as node-server`)
      t.same(res.headers['content-length'], expected.headers['content-length'], `${name} ${what}: the length`)
      t.equal(res.body, expected.body, `${name} ${what}: body`)
    }
  }
})

test('c.header() after c.body() (string, bytes, null, streams) and after new Response(body, { headers }) reaches the wire, as with @hono/node-server', { skip: referenceUnavailable() }, async (t) => {
  const dir = t.testdir({ static: {} })
  const { fast, viaReply, reference } = await servers(t, dir)
  const paths = ['/string', '/string-typed', '/bytes', '/null', '/cookies', '/stream', '/live-stream', '/response', '/response-stream', '/record', '/record-after']
  for (const path of paths) {
    const expected = await rawRequest(reference, 'GET', path)
    for (const [name, port] of [['fast', fast], ['reply.send', viaReply]] as const) {
      const res = await rawRequest(port, 'GET', '/h' + path)
      t.equal(res.status, expected.status, `${name} ${path}: status`)
      t.same(appHeaders(res), appHeaders(expected), `${name} ${path}: the same headers as node-server`)
      t.equal(res.body, expected.body, `${name} ${path}: body`)
    }
  }
  // What node-server showed above, spelled out.
  const string = await rawRequest(fast, 'GET', '/h/string')
  t.same(string.headers['x-after'], ['2'], 'set after c.body(string)')
  t.same(string.headers['content-type'], ['text/plain; charset=UTF-8'], 'the default type, on the wire only')
  const viaReplyString = await rawRequest(viaReply, 'GET', '/h/string')
  t.same(viaReplyString.headers['content-type'], ['text/plain; charset=UTF-8'], 'the default type through reply.send too')
  t.same((await rawRequest(fast, 'GET', '/h/live-stream')).headers['x-after'], ['2'], 'set after c.body(stream)')
  t.same((await rawRequest(fast, 'GET', '/h/cookies')).headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/'], 'each cookie set late on its own line')
  t.equal((await rawRequest(fast, 'GET', '/h/record-after')).body, '{"content-type":"text/plain","x-record":"1"}', 'a header record is never changed')
})
