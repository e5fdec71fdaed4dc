import { test } from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import cors from '@fastify/cors'
import compress from '@fastify/compress'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest } from './helpers/net'
import { refuses } from './helpers/plugin-loads'
import { gunzipSync } from 'node:zlib'

test('every hook of the instance and of the mount scope runs for mounted routes', async (t) => {
  const calls: string[] = []
  const app = new Hono()
  app.get('/x', (c) => { calls.push('hono'); return c.text('ok') })
  const server = Fastify()
  for (const hook of ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'onSend', 'onResponse'] as const) {
    server.addHook(hook, async () => { calls.push('instance:' + hook) })
  }
  await server.register(async (scope) => {
    scope.addHook('preHandler', async () => { calls.push('scope:preHandler') })
    await scope.register(fastifyHono, { app, prefix: '/v2' })
  })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  const res = await fetch(base + '/v2/x')
  t.equal(await res.text(), 'ok')
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(calls, [
    'instance:onRequest', 'instance:preParsing', 'instance:preValidation', 'instance:preHandler',
    'scope:preHandler', 'hono', 'instance:onSend', 'instance:onResponse'
  ])
})

test('headers set before the app runs are merged: the app wins, Set-Cookie and Vary combine', async (t) => {
  const app = new Hono()
  app.get('/x', (c) => {
    c.header('x-both', 'from-hono')
    c.header('vary', 'Accept-Encoding')
    c.header('set-cookie', 'hono=1', { append: true })
    return c.text('merged')
  })
  const server = Fastify()
  server.addHook('onRequest', async (request, reply) => {
    reply.header('x-both', 'from-fastify')
    reply.header('x-fastify-only', 'yes')
    reply.header('vary', 'Origin')
    reply.header('set-cookie', 'fastify=1')
  })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const res = await rawRequest(port, 'GET', '/v2/x')
  t.same(res.headers['x-both'], ['from-hono'])
  t.same(res.headers['x-fastify-only'], ['yes'])
  t.same(res.headers.vary, ['Origin, Accept-Encoding'])
  t.same(res.headers['set-cookie'], ['fastify=1', 'hono=1'])
  t.equal(res.body, 'merged')
})

test('@fastify/cors and a Fastify route that sets cookies, beside the mount', { skip: refuses('@fastify/cors') }, async (t) => {
  const app = new Hono().get('/x', (c) => c.json({ ok: true }))
  const server = Fastify()
  await server.register(cors, { origin: 'https://app.example', credentials: true })
  server.get('/login', async (request, reply) => {
    reply.header('set-cookie', ['session=abc; HttpOnly', 'theme=dark'])
    return { loggedIn: true }
  })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const res = await rawRequest(port, 'GET', '/v2/x', { headers: { origin: 'https://app.example' } })
  t.same(res.headers['access-control-allow-origin'], ['https://app.example'])
  t.same(res.headers['access-control-allow-credentials'], ['true'])
  t.same(JSON.parse(res.body), { ok: true })

  const preflight = await rawRequest(port, 'OPTIONS', '/v2/x', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
  t.equal(preflight.status, 204, '@fastify/cors answers the preflight')
  t.match(preflight.headers['access-control-allow-methods'][0], /POST/)

  const login = await rawRequest(port, 'GET', '/login')
  t.same(login.headers['set-cookie'], ['session=abc; HttpOnly', 'theme=dark'])
})

test('@fastify/compress (an onSend hook) compresses mounted responses', { skip: refuses('@fastify/compress') }, async (t) => {
  const app = new Hono()
  app.get('/big', (c) => c.text('compress me '.repeat(500)))
  app.get('/json', (c) => c.json({ items: Array.from({ length: 200 }, (_, i) => ({ i })) }))
  const server = Fastify()
  await server.register(compress, { global: true, threshold: 100 })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  for (const path of ['/v2/big', '/v2/json']) {
    const res = await rawRequest(port, 'GET', path, { headers: { 'accept-encoding': 'gzip' } })
    t.same(res.headers['content-encoding'], ['gzip'], path)
    const plain = gunzipSync(Buffer.from(res.body, 'latin1')).toString()
    t.ok(path === '/v2/big' ? plain === 'compress me '.repeat(500) : JSON.parse(plain).items.length === 200, `${path} decompresses to the original`)
  }
  const identity = await rawRequest(port, 'GET', '/v2/big')
  t.equal(identity.headers['content-encoding'], undefined)
  t.equal(identity.body, 'compress me '.repeat(500))
})

test("errors out of app.fetch reach Fastify's error handler, onError hooks and the log", async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(chunk.toString())); cb() } })
  const app = new Hono()
  app.get('/ok', (c) => c.text('fine'))
  app.get('/throws', () => { throw new Error('boom') })
  app.onError((err) => { throw err })
  const server = Fastify({ logger: { stream, level: 'info' } })
  const onErrorSeen: string[] = []
  server.addHook('onError', async (request, reply, error) => { onErrorSeen.push(error.message) })
  server.setErrorHandler((error, request, reply) => {
    reply.code(503).send({ handled: (error as Error).message })
  })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  await server.register(fastifyHono, { app: { fetch: () => 'not a response' } as never, prefix: '/bad' })
  await server.register(fastifyHono, { app: { fetch: () => { throw new Error('sync throw') } } as never, prefix: '/sync' })
  t.teardown(() => server.close())
  const { base } = await listen(server)

  const thrown = await fetch(base + '/v2/throws')
  t.equal(thrown.status, 503)
  t.same(await thrown.json(), { handled: 'boom' })
  const bad = await fetch(base + '/bad/x')
  t.same(await bad.json(), { handled: 'app.fetch() must return a Response, got string' })
  const sync = await fetch(base + '/sync/x')
  t.same(await sync.json(), { handled: 'sync throw' })
  t.same(onErrorSeen, ['boom', 'app.fetch() must return a Response, got string', 'sync throw'])

  await fetch(base + '/v2/ok')
  await new Promise((resolve) => setTimeout(resolve, 20))
  const completed = lines.filter((line) => line.msg === 'request completed')
  t.equal(completed.length, 4, '"request completed" is logged for mounted routes')
  t.ok(completed.every((line) => typeof line.responseTime === 'number'), 'with responseTime')
  t.same(completed.map((line) => (line.res as { statusCode: number }).statusCode), [503, 503, 503, 200])
})

test("Hono's own onError answer is used when it returns one", async (t) => {
  const app = new Hono()
  app.get('/throws', () => { throw new Error('inside') })
  app.onError((err, c) => c.json({ caught: err.message }, 418))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  const res = await fetch(base + '/v2/throws')
  t.equal(res.status, 418)
  t.same(await res.json(), { caught: 'inside' })
})

test('a response that cannot be written answers 500 and the process lives', async (t) => {
  const app = new Hono()
  app.get('/bad-header', () => new Response('hi', { headers: { 'x-bad': 'a\x01b' } }))
  app.get('/ok', (c) => c.text('still fine'))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const bad = await rawRequest(port, 'GET', '/v2/bad-header')
  t.equal(bad.status, 500)
  t.equal(bad.reason, 'Internal Server Error')
  t.equal(bad.headers['x-bad'], undefined)
  t.equal(Number(bad.headers['content-length'][0]), Buffer.byteLength(bad.body), 'the 500 carries a correct length')
  const ok = await rawRequest(port, 'GET', '/v2/ok')
  t.equal(ok.body, 'still fine')
})
