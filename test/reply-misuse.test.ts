import { test } from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

// c.env.reply.send(), hijack() and code() inside a mounted app: a warning
// that names the plugin and the fix, once per route, instead of Fastify's
// "Reply was already sent, did you forget to return reply" or a silent 200.
// Over sockets, with the log captured.

interface Line { level: number, msg: string, reqId?: string }

async function serve (t: Tap.Test): Promise<{ base: string, lines: Line[] }> {
  const lines: Line[] = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text))
      callback()
    }
  })
  const app = new Hono()
  app.get('/send', (c) => {
    c.env.reply.send('from reply')
    return c.text('from the app')
  })
  app.get('/hijack', (c) => {
    c.env.reply.hijack()
    c.env.outgoing.end('written raw')
    return c.text('from the app')
  })
  app.get('/code/:id', (c) => {
    c.env.reply.code(201)
    return c.text('created?')
  })
  // Right uses: no warning.
  app.get('/status', (c) => c.text('created', 201))
  app.get('/header', (c) => {
    c.env.reply.header('x-from-reply', '1')
    return c.text('ok')
  })
  app.get('/raw', (c) => {
    c.env.outgoing.writeHead(200, { 'content-type': 'text/plain' })
    c.env.outgoing.end('raw on purpose')
    return RESPONSE_ALREADY_SENT
  })
  const server = Fastify({ logger: { level: 'info', stream } })
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)
  return { base, lines }
}

async function get (url: string): Promise<[number, string]> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) })
  return [res.status, await res.text()]
}

test('c.env.reply.send(): what it sent stays, one warning per route saying to return a Response, no "already sent"', async (t) => {
  const { base, lines } = await serve(t)
  t.same(await get(`${base}/v2/send`), [200, 'from reply'])
  t.same(await get(`${base}/v2/send`), [200, 'from reply'])
  const warnings = lines.filter((line) => line.level === 40)
  t.equal(warnings.length, 1, 'once per route')
  t.match(warnings[0]?.msg, /^fastify-hono: c\.env\.reply\.send\(\) or c\.env\.reply\.hijack\(\) was called in the Hono app for GET \/v2\/send, so the Response it returned was not sent\. Return a Response instead/)
  t.notOk(lines.some((line) => /already sent/i.test(line.msg)), "no Fastify's 'Reply was already sent'")
})

test('c.env.reply.hijack(): the app\'s raw answer stays, one warning per route', async (t) => {
  const { base, lines } = await serve(t)
  t.same(await get(`${base}/v2/hijack`), [200, 'written raw'])
  t.same(await get(`${base}/v2/hijack`), [200, 'written raw'])
  const warnings = lines.filter((line) => line.level === 40)
  t.equal(warnings.length, 1)
  t.match(warnings[0]?.msg, /^fastify-hono: .*hijack\(\) was called in the Hono app for GET \/v2\/hijack/)
})

test('c.env.reply.code(): the Response\'s status goes out, with one warning per route saying to set it on the Response', async (t) => {
  const { base, lines } = await serve(t)
  t.same(await get(`${base}/v2/code/1`), [200, 'created?'])
  t.same(await get(`${base}/v2/code/2`), [200, 'created?'])
  const warnings = lines.filter((line) => line.level === 40)
  t.equal(warnings.length, 1, 'once for the route, whatever the path')
  t.equal(warnings[0]?.msg, "fastify-hono: c.env.reply.code(201) has no effect for GET /v2/code/:id: the app's Response has status 200, and that is what is sent. " +
    'Set the status on the Response: c.json(data, 201), c.text(text, 201), c.status(201) or new Response(body, { status: 201 }).')
})

test('no warning for the right uses: a status on the Response, reply.header(), RESPONSE_ALREADY_SENT', async (t) => {
  const { base, lines } = await serve(t)
  t.same(await get(`${base}/v2/status`), [201, 'created'])
  const res = await fetch(`${base}/v2/header`)
  t.same([res.status, res.headers.get('x-from-reply'), await res.text()], [200, '1', 'ok'])
  t.same(await get(`${base}/v2/raw`), [200, 'raw on purpose'])
  t.same(lines.filter((line) => line.level >= 40), [])
})
