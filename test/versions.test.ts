// What went wrong with the oldest fastify and hono the peer ranges accept
// (docs/versions.md), each checked on whatever is installed: the CI floor run
// (.ci/compat.mjs) runs these on the floor versions, where they failed
// before the plugin's fixes.
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import type { bodyLimit as BodyLimit } from 'hono/body-limit'
import fastifyHono from 'fastify-hono'
import { listen, parseResponses, rawExchange, rawRequest } from './helpers/net'
import { lacks, need } from './helpers/optional'

function urlApp (): Hono {
  return new Hono().all('*', (c) => c.text(c.req.url))
}

// Fastify 5.0 leaves request.host undefined for a missing Host: 500 before the fix.
test('a request without a Host, or with an empty one: the local address stands in', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: urlApp(), prefix: '/h' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const http10 = await rawRequest(port, 'GET', '/h/a', { version: '1.0', headers: { host: '' } })
  t.equal(http10.status, 200, 'HTTP/1.0 without Host')
  t.equal(http10.body, `http://127.0.0.1:${port}/a`)
  const empty = parseResponses(await rawExchange(port, 'GET /h/b HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n'), ['GET'])[0]
  t.equal(empty.status, 200, 'HTTP/1.1 with an empty Host')
  t.equal(empty.body, `http://127.0.0.1:${port}/b`)
})

// Fastify adds Connection: close to a body parser's error only from 5.5.0:
// before the fix, the 413 kept the connection open, waiting for the body.
test('a declared Content-Length over bodyLimit: 413 with Connection: close, before the body', async (t) => {
  let ran = false
  const server = Fastify()
  await server.register(fastifyHono, { app: new Hono().post('*', (c) => { ran = true; return c.text('ran') }), prefix: '/h', bodyLimit: 100 })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  // The body is never sent: the answer must come, and the server must close.
  const wire = await rawExchange(port, `POST /h/up HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n`, { timeout: 3000 })
  const [res] = parseResponses(wire, ['POST'])
  t.equal(res.status, 413)
  t.same(res.headers.connection, ['close'])
  t.notOk(ran, 'the app did not run')
})

// hono/body-limit 4.1–4.4 builds `new Request(c.req.raw, { body: stream })`
// without `duplex`: 500 before the fix.
test('new Request() with a stream body and no duplex: duplex defaults to half', async (t) => {
  const app = new Hono().post('*', async (c) => {
    const copy = new Request(c.req.raw, { body: c.req.raw.body } as RequestInit)
    return c.text(`copied ${(await copy.text()).length}`)
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/h' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const res = await rawRequest(port, 'POST', '/h/x', { headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: '5\r\nhello\r\n0\r\n\r\n' })
  t.equal(res.status, 200)
  t.equal(res.body, 'copied 5')
})

test('hono/body-limit with a chunked body', { skip: lacks('hono/body-limit') }, async (t) => {
  const { bodyLimit } = need<{ bodyLimit: typeof BodyLimit }>('hono/body-limit')
  const app = new Hono().post('*', bodyLimit({ maxSize: 10 }), async (c) => c.text(`got ${(await c.req.text()).length}`))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/h' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const under = await rawRequest(port, 'POST', '/h/x', { headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: '5\r\nhello\r\n0\r\n\r\n' })
  t.equal(under.status, 200, 'under the limit')
  t.equal(under.body, 'got 5')
  const over = await rawRequest(port, 'POST', '/h/x', { headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: 'f\r\nhello, world!!\r\n0\r\n\r\n' })
  t.equal(over.status, 413, 'over the limit: the middleware\'s 413')
})

// hono/body-limit 4.1–4.12 answers a chunked body over its limit after the
// handler, from c.error: before the fix, the error went on to Fastify (500).
test('hono/body-limit\'s onError answers a chunked body over its limit', { skip: lacks('hono/body-limit') }, async (t) => {
  const { bodyLimit } = need<{ bodyLimit: typeof BodyLimit }>('hono/body-limit')
  let errors = 0
  const app = new Hono().post('*', bodyLimit({ maxSize: 10, onError: (c) => c.text('too big', 413) }), async (c) => c.text(`got ${(await c.req.text()).length}`))
  const server = Fastify()
  server.addHook('onError', async () => { errors++ })
  await server.register(fastifyHono, { app, prefix: '/h' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const over = await rawRequest(port, 'POST', '/h/x', { headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: 'f\r\nhello, world!!\r\n0\r\n\r\n' })
  t.equal(over.status, 413)
  t.equal(over.body, 'too big', 'the middleware\'s onError')
  t.equal(errors, 0, 'nothing reached Fastify\'s error handling')
})

// Hono 4.1's basePath() does not copy the app's not-found handler.
test('app.notFound() set before registration answers on the mount', async (t) => {
  const app = new Hono().get('/a', (c) => c.text('a'))
  app.notFound((c) => c.text('no such thing', 404))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/h' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const res = await rawRequest(port, 'GET', '/h/b')
  t.equal(res.status, 404)
  t.equal(res.body, 'no such thing')
})

// Hono 4.0.0–4.0.5's router threw for a method no route had, and then kept
// failing: the mount registers every method Fastify knows.
test('a method the app has no route for: 404, and the app still answers after it', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: new Hono().get('/a', (c) => c.text('a')), prefix: '/h' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const method = server.supportedMethods.find((m) => m !== 'GET' && m !== 'HEAD' && m !== 'POST' && m !== 'OPTIONS' && m !== 'CONNECT') ?? 'PROPFIND'
  const odd = await rawRequest(port, method, '/h/a')
  t.equal(odd.status, 404, `${method}: 404`)
  const after = await rawRequest(port, 'GET', '/h/a')
  t.equal(after.status, 200, 'GET afterwards: 200')
  t.equal(after.body, 'a')
})

// fastify-hono/ws is built on hono/ws's defineWebSocketHelper (hono 4.6.7 on):
// without it, importing it says what it needs.
test('fastify-hono/ws on a hono without defineWebSocketHelper: a clear error at import', {
  skip: lacks('hono/ws', 'defineWebSocketHelper') === false ? 'the installed hono has defineWebSocketHelper' : false
}, async (t) => {
  t.throws(() => need('fastify-hono/ws'), { message: /fastify-hono\/ws needs the defineWebSocketHelper of hono\/ws/ })
})
