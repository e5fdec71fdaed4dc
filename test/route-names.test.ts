import { test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { mount as Mount } from 'hono/mount'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'
import { listen } from './helpers/net'
import { lacks, need } from './helpers/optional'

// `request.honoRoute` names the Hono route a mounted request reached, with the
// mount prefix, where Fastify's `routeOptions.url` only knows the catch-all.

interface Seen { url: string, status: number, route: string | undefined, fastifyRoute: string | undefined }

/** A server whose root onResponse hook records each request's route names. */
function recordingServer (): { server: FastifyInstance, seen: Seen[] } {
  const server = Fastify()
  const seen: Seen[] = []
  server.addHook('onResponse', async (request, reply) => {
    seen.push({ url: request.url, status: reply.statusCode, route: request.honoRoute, fastifyRoute: request.routeOptions.url })
  })
  return { server, seen }
}

async function hit (base: string, paths: string[], init?: RequestInit): Promise<void> {
  for (const path of paths) await (await fetch(base + path, init)).arrayBuffer()
}

function routesByUrl (seen: Seen[]): Record<string, string | undefined> {
  return Object.fromEntries(seen.map(({ url, route }) => [url, route]))
}

test('the route of the handler a request reached, prefix included, one name for every id', async (t) => {
  const app = new Hono<{ Bindings: FastifyHonoBindings }>()
  app.use('*', async (c, next) => { await next() })
  app.get('/users/:id', (c) => c.text(c.req.param('id')))
  app.get('/', (c) => c.text('root'))
  app.get('/files/*', (c) => c.text('file'))
  app.post('/users', async (c, next) => { await next() }, (c) => c.text('created', 201))
  const { server, seen } = recordingServer()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)

  await hit(base, ['/v2/users/1', '/v2/users/2', '/v2/users/3?x=1', '/v2', '/v2/', '/v2/files/a/b.txt'])
  await hit(base, ['/v2/users'], { method: 'POST', body: 'x' })
  t.same(seen.map(({ route, fastifyRoute }) => [route, fastifyRoute]), [
    ['/v2/users/:id', '/v2/*'],
    ['/v2/users/:id', '/v2/*'],
    ['/v2/users/:id', '/v2/*'],
    ['/v2', '/v2'],
    ['/v2', '/v2/*'],
    ['/v2/files/*', '/v2/*'],
    ['/v2/users', '/v2/*']
  ])
  t.equal(seen[0].route, seen[1].route, 'one string for both, not one per path')
})

test('the handler, not a middleware: before it, after it, or answering in its place', async (t) => {
  const app = new Hono()
  app.use('/admin/*', async (c, next) => {
    if (c.req.header('authorization') === undefined) return c.text('no', 401)
    await next()
  })
  app.get('/users/me', (c) => c.text('me'))
  app.get('/users/:id', (c) => c.text('user'))
  app.get('/admin/users/:id', (c) => c.text('admin'))
  app.get('/boom/:id', () => { throw new Error('boom') })
  app.get('/teapot/:id', () => { throw new HTTPException(418) })
  app.get('/gone/:id', (c) => c.notFound())
  // Registered after the handlers: matched after them, never reached.
  app.use('*', async (c, next) => { await next() })
  const { server, seen } = recordingServer()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/api' })
  const { base } = await listen(server)

  await hit(base, ['/api/users/me', '/api/users/7', '/api/admin/users/7', '/api/boom/1', '/api/teapot/1', '/api/gone/1'])
  await hit(base, ['/api/users/8'], { method: 'HEAD' })
  t.same(seen.map(({ url, status, route }) => [url, status, route]), [
    ['/api/users/me', 200, '/api/users/me'], // the first handler that matched answers
    ['/api/users/7', 200, '/api/users/:id'],
    // The middleware answered in the handler's place: still the route the
    // request was for, as Fastify's routeOptions.url is for a hook that replies.
    ['/api/admin/users/7', 401, '/api/admin/users/:id'],
    ['/api/boom/1', 500, '/api/boom/:id'], // the error went to Fastify's error handler
    ['/api/teapot/1', 418, '/api/teapot/:id'],
    ['/api/gone/1', 404, '/api/gone/:id'], // a handler's own 404 is still its route
    ['/api/users/8', 200, '/api/users/:id'] // HEAD is routed as GET
  ])
})

test('a sub-app mounted with app.route(), with and without its own onError', async (t) => {
  const plain = new Hono()
  plain.get('/items/:id', (c) => c.text('item'))
  const guarded = new Hono()
  guarded.onError((err, c) => c.text(err.message, 500))
  guarded.get('/items/:id', (c) => c.text('item'))
  guarded.get('/fail/:id', () => { throw new Error('sub') })
  const app = new Hono()
  app.route('/plain', plain)
  app.route('/guarded', guarded)
  const { server, seen } = recordingServer()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v1' })
  const { base } = await listen(server)

  await hit(base, ['/v1/plain/items/1', '/v1/guarded/items/1', '/v1/guarded/fail/1'])
  t.same(routesByUrl(seen), {
    '/v1/plain/items/1': '/v1/plain/items/:id',
    '/v1/guarded/items/1': '/v1/guarded/items/:id',
    '/v1/guarded/fail/1': '/v1/guarded/fail/:id'
  })
})

test('a function that takes next is a middleware, as Hono tells them apart: hono/mount, unless wrapped', { skip: lacks('hono/mount') }, async (t) => {
  const { mount } = need<{ mount: typeof Mount }>('hono/mount')
  const legacy = (request: Request): Response => new Response('legacy ' + new URL(request.url).pathname)
  const mounted = mount(legacy)
  const app = new Hono()
  app.all('/legacy/*', mount(legacy))
  // A one-parameter handler around it: the chain ends there, so it has a name.
  app.all('/wrapped/*', (c) => mounted(c, async () => {}))
  const { server, seen } = recordingServer()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)

  t.equal(await (await fetch(base + '/v2/legacy/a')).text(), 'legacy /a')
  t.equal(await (await fetch(base + '/v2/wrapped/a')).text(), 'legacy /a')
  t.same(routesByUrl(seen), { '/v2/legacy/a': undefined, '/v2/wrapped/a': '/v2/wrapped/*' })
})

test('not found: no route name, whatever the path, with or without middleware matching', async (t) => {
  const app = new Hono()
  app.use('*', async (c, next) => {
    await next()
    c.header('x-seen', '1')
  })
  app.use('/api/*', async (c, next) => {
    // A CORS-like middleware that answers preflights itself.
    if (c.req.method === 'OPTIONS') return c.body(null, 204)
    await next()
  })
  app.get('/api/users/:id', (c) => c.text('user'))
  const bare = new Hono()
  bare.get('/only', (c) => c.text('only'))
  const { server, seen } = recordingServer()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v2' })
  await server.register(fastifyHono, { app: bare, prefix: '/bare' })
  await server.register(fastifyHono, { app: bare, prefix: '/fastify404', notFound: 'fastify' })
  const { base } = await listen(server)

  await hit(base, ['/v2/nope/1', '/v2/nope/2', '/v2/api/other', '/bare/nope', '/fastify404/nope', '/fastify404/only'])
  await hit(base, ['/v2/api/users/1'], { method: 'OPTIONS' })
  t.same(seen.map(({ url, status, route }) => [url, status, route]), [
    ['/v2/nope/1', 404, undefined],
    ['/v2/nope/2', 404, undefined],
    ['/v2/api/other', 404, undefined],
    ['/bare/nope', 404, undefined],
    ['/fastify404/nope', 404, undefined], // Fastify's not-found handler answered
    ['/fastify404/only', 200, '/fastify404/only'],
    // Only middleware matched: no handler route, as for a not-found.
    ['/v2/api/users/1', 204, undefined]
  ])
})

test('stripPrefix: false: the app sees the whole path, its route path is the name as is', async (t) => {
  const app = new Hono().basePath('/v3')
  app.get('/users/:id', (c) => c.text('user'))
  app.get('/', (c) => c.text('root'))
  const { server, seen } = recordingServer()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v3', stripPrefix: false })
  const { base } = await listen(server)

  await hit(base, ['/v3/users/1', '/v3', '/v3/nope'])
  t.same(routesByUrl(seen), { '/v3/users/1': '/v3/users/:id', '/v3': '/v3', '/v3/nope': undefined })
})

test('one app under two prefixes, at the root, and in a prefixed scope: each mount names its own', async (t) => {
  const app = new Hono()
  app.get('/users/:id', (c) => c.text('user'))
  app.get('/', (c) => c.text('root'))
  const { server, seen } = recordingServer()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/a' })
  await server.register(fastifyHono, { app, prefix: '/b/' })
  await server.register(async (scope) => {
    await scope.register(fastifyHono, { app, prefix: '/inner' })
  }, { prefix: '/outer' })
  await server.register(async (scope) => {
    await scope.register(fastifyHono, { app })
  }, { prefix: '/t/:tenant' })
  const { base } = await listen(server)

  await hit(base, ['/a/users/1', '/b/users/1', '/outer/inner/users/1', '/t/acme/users/1', '/t/acme'])
  t.same(routesByUrl(seen), {
    '/a/users/1': '/a/users/:id',
    '/b/users/1': '/b/users/:id',
    '/outer/inner/users/1': '/outer/inner/users/:id',
    '/t/acme/users/1': '/t/:tenant/users/:id',
    '/t/acme': '/t/:tenant'
  })

  const root = Fastify()
  const rootSeen: Array<string | undefined> = []
  root.addHook('onResponse', async (request) => { rootSeen.push(request.honoRoute) })
  t.teardown(() => root.close())
  await root.register(fastifyHono, { app })
  const { base: rootBase } = await listen(root)
  await hit(rootBase, ['/users/1', '/'])
  t.same(rootSeen, ['/users/:id', '/'])
})

test('the app itself is left alone: its router, and its answers elsewhere', async (t) => {
  const app = new Hono()
  app.get('/users/:id', (c) => c.text('user ' + c.req.param('id')))
  const router = app.router
  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v2' })
  await listen(server)
  t.equal(app.router, router)
  t.equal(await (await app.request('/users/5')).text(), 'user 5')
})

test('where the name can be read: inside the app already, not before it routed, not on other routes', async (t) => {
  const app = new Hono<{ Bindings: FastifyHonoBindings }>()
  app.get('/users/:id', (c) => c.text(String(c.env.request.honoRoute)))
  const server = Fastify()
  const early: Array<string | undefined> = []
  const late: Array<string | undefined> = []
  server.addHook('onRequest', async (request) => { early.push(request.honoRoute) })
  server.addHook('onResponse', async (request) => { late.push(request.honoRoute) })
  server.get('/plain/:id', async () => 'plain')
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app, prefix: '/v2' })
  await server.register(fastifyHono, { app: { fetch: () => new Response('fetch app') }, prefix: '/other' })
  const { base } = await listen(server)

  t.equal(await (await fetch(base + '/v2/users/1')).text(), '/v2/users/:id')
  await hit(base, ['/plain/1', '/other/x', '/nowhere'])
  t.same(early, [undefined, undefined, undefined, undefined])
  t.same(late, ['/v2/users/:id', undefined, undefined, undefined])
})
