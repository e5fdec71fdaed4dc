import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'
import { caseInsensitiveFastify } from './helpers/fastify-options'

test('invalid options fail registration with an error naming the option', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['no options', undefined, /option "app" is required/],
    ['no app', {}, /option "app" is required/],
    ['app without fetch', { app: {} }, /option "app" must be a Hono app or an object with a fetch/],
    ['app.fetch not a function', { app: { fetch: 'x' } }, /option "app"/],
    ['unknown notFound', { app: new Hono(), notFound: 'express' }, /option "notFound" must be 'hono' or 'fastify', got "express"/],
    ['notFound fastify without a Hono app', { app: { fetch: () => new Response('') }, notFound: 'fastify' }, /option "notFound"/],
    ['stripPrefix not boolean', { app: new Hono(), stripPrefix: 'no' }, /option "stripPrefix" must be a boolean/],
    ['bodyLimit not a positive integer', { app: new Hono(), bodyLimit: -1 }, /option "bodyLimit" must be a positive integer/],
    ['overrideGlobalObjects not boolean', { app: new Hono(), overrideGlobalObjects: 1 }, /option "overrideGlobalObjects" must be a boolean/]
  ]
  for (const [name, options, message] of cases) {
    const server = Fastify()
    server.register(fastifyHono, options as never)
    await t.rejects(server.ready(), message, name)
  }
})

test('mounts the prefix itself and everything below it, for every method', async (t) => {
  const app = new Hono()
  app.all('*', (c) => c.json({ method: c.req.method, path: c.req.path, query: c.req.query() }))
  const server = Fastify()
  // Every method Fastify knows when the plugin registers, custom ones included.
  server.addHttpMethod('PROPFIND', { hasBody: true })
  server.get('/legacy', async () => 'still Fastify')
  await server.register(fastifyHono, { app, prefix: '/v2' })
  t.teardown(() => server.close())
  const { base } = await listen(server)

  for (const [path, expected, query] of [['/v2', '/', {}], ['/v2/', '/', {}], ['/v2/a/b?q=1', '/a/b', { q: '1' }]] as const) {
    const res = await fetch(base + path)
    t.equal(res.status, 200, path)
    t.same(await res.json(), { method: 'GET', path: expected, query }, path)
  }
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND']) {
    const res = await fetch(base + '/v2/x', { method })
    t.equal(res.status, 200, method)
    t.same(await res.json(), { method, path: '/x', query: {} }, method)
  }
  const legacy = await fetch(base + '/legacy')
  t.equal(await legacy.text(), 'still Fastify')
  const outside = await fetch(base + '/v3/x')
  t.equal(outside.status, 404)
  t.match(await outside.json(), { message: 'Route GET:/v3/x not found' }, "outside the mount, Fastify's 404 answers")
})

test('two apps under two prefixes, and the parent keeps parsing JSON', async (t) => {
  const one = new Hono().get('/', (c) => c.text('one'))
  const two = new Hono().post('/echo', async (c) => c.text(await c.req.text()))
  const server = Fastify()
  server.post('/json', async (request) => ({ parsed: request.body }))
  await server.register(fastifyHono, { app: one, prefix: '/one' })
  await server.register(fastifyHono, { app: two, prefix: '/two' })
  t.teardown(() => server.close())
  const { base } = await listen(server)

  t.equal(await (await fetch(base + '/one')).text(), 'one')
  const echoed = await fetch(base + '/two/echo', { method: 'POST', body: '{"raw":true}', headers: { 'content-type': 'application/json' } })
  t.equal(await echoed.text(), '{"raw":true}', 'the mounted app gets the raw body')
  const parent = await fetch(base + '/json', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } })
  t.same(await parent.json(), { parsed: { a: 1 } }, "the parent's JSON parser is untouched")
})

test('mounted at the root, beside Fastify routes', async (t) => {
  const app = new Hono().get('/hono', (c) => c.text('hono')).get('/', (c) => c.text('root'))
  const server = Fastify()
  server.get('/legacy', async () => 'legacy')
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  t.equal(await (await fetch(base + '/')).text(), 'root')
  t.equal(await (await fetch(base + '/hono')).text(), 'hono')
  t.equal(await (await fetch(base + '/legacy')).text(), 'legacy')
  const missing = await fetch(base + '/missing')
  t.equal(missing.status, 404)
  t.equal(await missing.text(), '404 Not Found', "notFound: 'hono' (default): Hono's own 404")
})

test("notFound: 'fastify' hands unmatched requests to Fastify's not-found handler", async (t) => {
  const app = new Hono()
  app.use('*', async (c, next) => { await next(); c.header('x-seen', 'yes') })
  app.get('/moved', (c) => c.text('moved to hono'))
  app.get('/gone', (c) => c.text('gone', 404))
  const server = Fastify()
  server.get('/legacy', async () => 'legacy')
  server.setNotFoundHandler((request, reply) => reply.code(404).send({ fastify404: request.url }))
  await server.register(fastifyHono, { app, notFound: 'fastify' })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  t.equal(await (await fetch(base + '/moved')).text(), 'moved to hono')
  t.equal(await (await fetch(base + '/legacy')).text(), 'legacy')
  const missing = await fetch(base + '/nowhere?x=1')
  t.equal(missing.status, 404)
  t.same(await missing.json(), { fastify404: '/nowhere?x=1' })
  const gone = await fetch(base + '/gone')
  t.equal(gone.status, 404)
  t.equal(await gone.text(), 'gone', 'a 404 a Hono route returns itself is kept')
})

test('stripPrefix: false lets a basePath app see the full path', async (t) => {
  const app = new Hono().basePath('/api/v1')
  app.get('/items/:id', (c) => c.json({ id: c.req.param('id'), path: c.req.path }))
  app.get('/', (c) => c.text('index ' + c.req.path))
  const server = await caseInsensitiveFastify()
  await server.register(fastifyHono, { app, prefix: '/api/v1', stripPrefix: false })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  t.same(await (await fetch(base + '/api/v1/items/3')).json(), { id: '3', path: '/api/v1/items/3' })
  t.same(await (await fetch(base + '/API/%76%31/items/4')).json(), { id: '4', path: '/api/v1/items/4' }, 'the prefix reaches the app in its canonical form')
  t.equal(await (await fetch(base + '/api/v1')).text(), 'index /api/v1')
})
