// A mount beside the routes a Fastify app already has, registered before or
// after it: wildcard routes of @fastify/cors, @fastify/static and the user's
// own, at the root and under a prefix. The rule (docs/migration.md, "Routes
// on both sides"): where a Fastify route and the mount have the same path, the
// Fastify route answers its methods; the mount answers everything else.
import { join } from 'node:path'
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import fastifyCors from '@fastify/cors'
import fastifyStatic from '@fastify/static'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'
import { fetchWithTimeout as get, listen, type Teardown } from './helpers/compat'
import { rawRequest } from './helpers/net'
import { refuses } from './helpers/plugin-loads'

type Env = { Bindings: FastifyHonoBindings }
type Order = 'before' | 'after'

const PREFLIGHT = { origin: 'http://allowed.test', 'access-control-request-method': 'PUT' }

/** A Hono app that answers every method and path, counting what reached it. */
function echoApp (): { app: Hono<Env>, seen: string[] } {
  const seen: string[] = []
  const app = new Hono<Env>()
  app.all('*', (c) => {
    seen.push(`${c.req.method} ${c.req.path}`)
    return c.text(`hono ${c.req.method} ${c.req.path}`)
  })
  return { app, seen }
}

/** Registers `other` and the mount in the given order, and starts listening on a real socket. */
async function start (t: Teardown, order: Order, other: (server: FastifyInstance) => unknown, mount: (server: FastifyInstance) => unknown): Promise<{ server: FastifyInstance, base: string, port: number }> {
  const server = Fastify()
  if (order === 'before') {
    await other(server)
    await mount(server)
  } else {
    await mount(server)
    await other(server)
  }
  const base = await listen(t, server)
  return { server, base, port: Number(new URL(base).port) }
}

for (const order of ['before', 'after'] as const) {
  t.test(`@fastify/cors registered ${order} a mount at the root: the server starts and the preflights stay its own`, { skip: refuses('@fastify/cors') }, async (t) => {
    const { app, seen } = echoApp()
    const { base, port } = await start(t, order,
      (server) => server.register(fastifyCors, { origin: ['http://allowed.test'], methods: ['GET', 'PUT'] }),
      (server) => server.register(fastifyHono, { app, notFound: 'fastify' }))

    let res = await get(`${base}/things`, { method: 'OPTIONS', headers: PREFLIGHT })
    t.equal(res.status, 204, 'the preflight is answered by @fastify/cors')
    t.equal(res.headers.get('access-control-allow-origin'), 'http://allowed.test')
    t.equal(res.headers.get('access-control-allow-methods'), 'GET, PUT')
    // The same over a raw socket, at the mount point itself.
    const raw = await rawRequest(port, 'OPTIONS', '/', { headers: PREFLIGHT })
    t.equal(raw.status, 204)
    t.same(raw.headers['access-control-allow-origin'], ['http://allowed.test'])

    res = await get(`${base}/things`, { method: 'PUT', headers: { origin: 'http://allowed.test' } })
    t.equal(res.status, 200)
    t.equal(await res.text(), 'hono PUT /things', 'the other methods reach the app')
    t.equal(res.headers.get('access-control-allow-origin'), 'http://allowed.test', "and @fastify/cors's hook adds its headers")
    res = await get(`${base}/`)
    t.equal(await res.text(), 'hono GET /')
    t.same(seen, ['PUT /things', 'GET /'], 'no OPTIONS request reached the app')
  })

  t.test(`@fastify/cors registered ${order} a mount, both under a prefix: the preflights stay its own`, { skip: refuses('@fastify/cors') }, async (t) => {
    const { app, seen } = echoApp()
    const server = Fastify()
    await server.register(async (api) => {
      const cors = (): unknown => api.register(fastifyCors, { origin: ['http://allowed.test'], methods: ['GET', 'PUT'] })
      const mount = (): unknown => api.register(fastifyHono, { app, prefix: '/v2' })
      if (order === 'before') {
        await cors()
        await mount()
      } else {
        await mount()
        await cors()
      }
    }, { prefix: '/api' })
    const base = await listen(t, server)

    let res = await get(`${base}/api/v2/things`, { method: 'OPTIONS', headers: PREFLIGHT })
    t.equal(res.status, 204, 'the preflight is answered by @fastify/cors')
    t.equal(res.headers.get('access-control-allow-methods'), 'GET, PUT')
    res = await get(`${base}/api/v2/things`, { headers: { origin: 'http://allowed.test' } })
    t.equal(await res.text(), 'hono GET /things')
    t.equal(res.headers.get('access-control-allow-origin'), 'http://allowed.test')
    t.same(seen, ['GET /things'])
  })

  t.test(`a route of the user's own at /* registered ${order} a mount at the root answers its methods; the mount the others`, async (t) => {
    const { app, seen } = echoApp()
    const { base, port } = await start(t, order,
      (server) => server.get('/*', async (request) => `fastify ${request.method} ${request.url}`),
      (server) => server.register(fastifyHono, { app }))

    t.equal(await (await get(`${base}/a/b`)).text(), 'fastify GET /a/b')
    t.equal(await (await get(`${base}/`)).text(), 'fastify GET /', 'the mount point itself too: /* covers /')
    const head = await rawRequest(port, 'HEAD', '/a/b')
    t.equal(head.status, 200)
    t.equal(head.headers['content-length']?.[0], String('fastify HEAD /a/b'.length), "HEAD follows the user's GET (its automatic HEAD route)")
    t.equal(await (await get(`${base}/a/b`, { method: 'POST', body: 'x' })).text(), 'hono POST /a/b')
    t.equal(await (await get(`${base}/`, { method: 'DELETE' })).text(), 'hono DELETE /')
    t.same(seen, ['POST /a/b', 'DELETE /'])
  })

  t.test(`a route of the user's own at /v2/* registered ${order} a mount at /v2`, async (t) => {
    const { app, seen } = echoApp()
    const { base } = await start(t, order,
      (server) => server.register(async (scope) => { scope.get('/*', async (request) => `fastify ${request.url}`) }, { prefix: '/v2' }),
      (server) => server.register(fastifyHono, { app, prefix: '/v2' }))

    t.equal(await (await get(`${base}/v2/x`)).text(), 'fastify /v2/x')
    t.equal(await (await get(`${base}/v2/`)).text(), 'fastify /v2/')
    t.equal(await (await get(`${base}/v2`)).text(), 'hono GET /', '/v2/* does not cover /v2 itself: the mount answers it')
    t.equal(await (await get(`${base}/v2/x`, { method: 'PUT' })).text(), 'hono PUT /x')
    t.same(seen, ['GET /', 'PUT /x'])
  })

  t.test(`@fastify/static's wildcard registered ${order} a mount at the root serves GET and HEAD; the mount the other methods`, { skip: refuses('@fastify/static') }, async (t) => {
    const { app, seen } = echoApp()
    const fastify404: string[] = []
    const { base, port } = await start(t, order,
      async (server) => {
        server.setNotFoundHandler((request, reply) => { fastify404.push(request.url); return reply.code(404).send('fastify 404') })
        await server.register(fastifyStatic, { root: join(__dirname, 'fixtures', 'static') })
      },
      (server) => server.register(fastifyHono, { app, notFound: 'fastify' }))

    let res = await get(`${base}/hello.txt`)
    t.equal(res.status, 200)
    t.equal(await res.text(), 'hello from @fastify/static\n')
    const head = await rawRequest(port, 'HEAD', '/hello.txt')
    t.equal(head.status, 200, 'HEAD is the static route too')
    res = await get(`${base}/missing`)
    t.equal(res.status, 404)
    t.equal(await res.text(), 'fastify 404', "a file it does not have: @fastify/static hands it to Fastify's not-found handler")
    res = await get(`${base}/api/items`, { method: 'POST', body: '{}' })
    t.equal(await res.text(), 'hono POST /api/items')
    t.same(seen, ['POST /api/items'])
    t.same(fastify404, ['/missing'])
  })

  t.test(`@fastify/static under /v2/ registered ${order} a mount at /v2`, { skip: refuses('@fastify/static') }, async (t) => {
    const { app, seen } = echoApp()
    const { base } = await start(t, order,
      (server) => server.register(fastifyStatic, { root: join(__dirname, 'fixtures', 'static'), prefix: '/v2/' }),
      (server) => server.register(fastifyHono, { app, prefix: '/v2' }))

    t.equal(await (await get(`${base}/v2/hello.txt`)).text(), 'hello from @fastify/static\n')
    t.equal(await (await get(`${base}/v2`)).text(), 'hono GET /')
    t.equal(await (await get(`${base}/v2/hello.txt`, { method: 'DELETE' })).text(), 'hono DELETE /hello.txt')
    t.same(seen, ['GET /', 'DELETE /hello.txt'])
  })
}

t.test('@fastify/static with wildcard: false beside a mount at the root: each file is a route, the app answers the rest of GET', { skip: refuses('@fastify/static') }, async (t) => {
  const { app, seen } = echoApp()
  const server = Fastify()
  await server.register(fastifyStatic, { root: join(__dirname, 'fixtures', 'static'), wildcard: false })
  await server.register(fastifyHono, { app })
  const base = await listen(t, server)
  t.equal(await (await get(`${base}/hello.txt`)).text(), 'hello from @fastify/static\n')
  t.equal(await (await get(`${base}/users/7`)).text(), 'hono GET /users/7')
  t.same(seen, ['GET /users/7'])
})

t.test('a route with constraints of its own shares the path with the mount: it answers the requests it matches', async (t) => {
  const { app, seen } = echoApp()
  const server = Fastify()
  await server.register(fastifyHono, { app })
  server.get('/*', { constraints: { host: 'static.test' } }, async () => 'fastify for static.test')
  const base = await listen(t, server)
  const port = Number(new URL(base).port)
  t.equal((await rawRequest(port, 'GET', '/a', { headers: { host: 'static.test' } })).body, 'fastify for static.test')
  t.equal(await (await get(`${base}/a`)).text(), 'hono GET /a')
  t.same(seen, ['GET /a'])
  t.notOk(server.hasConstraintStrategy('fastifyHonoYield'), 'no collision, so no constraint of the mount')
})

t.test('the router stays unconstrained unless a route takes a path from a mount registered before it', async (t) => {
  const before = Fastify()
  before.options('*', async () => 'mine')
  await before.register(fastifyHono, { app: new Hono() })
  await before.ready()
  t.notOk(before.hasConstraintStrategy('fastifyHonoYield'), 'registered before the mount: the mount leaves the method out, nothing else changes')
  t.match(before.printRoutes({ method: 'OPTIONS' }), /\*/)
  await before.close()

  const after = Fastify()
  await after.register(fastifyHono, { app: new Hono() })
  after.options('*', async () => 'mine')
  after.get('/legacy', async () => 'legacy')
  await after.ready()
  t.ok(after.hasConstraintStrategy('fastifyHonoYield'), 'registered after: it gets the constraint that puts it first')
  t.equal((await after.inject({ method: 'OPTIONS', url: '/x' })).body, 'mine')
  t.equal((await after.inject({ url: '/legacy' })).body, 'legacy', 'other routes answer as before')
  t.equal((await after.inject({ url: '/other' })).statusCode, 404, "the app's own 404")
  await after.close()
})

t.test('two mounts at the same prefix still fail, with FST_ERR_HONO_DUPLICATED_MOUNT (no longer Fastify\'s FST_ERR_DUPLICATED_ROUTE)', async (t) => {
  for (const prefix of ['', '/v2']) {
    const server = Fastify()
    server.register(fastifyHono, { app: new Hono(), prefix })
    server.register(fastifyHono, { app: new Hono(), prefix })
    const err = await server.ready().then(() => undefined, (err: Error & { code?: string }) => err)
    t.equal(err?.code, 'FST_ERR_HONO_DUPLICATED_MOUNT', prefix === '' ? 'at the root' : 'under a prefix')
  }
})

t.test('mounts under nested prefixes and a later wildcard in an enclosing scope', async (t) => {
  const { app, seen } = echoApp()
  const server = Fastify()
  await server.register(async (api) => {
    await api.register(async (inner) => {
      await inner.register(fastifyHono, { app })
    })
    // Added in a scope two levels above the mount, after it.
    api.put('/*', async () => 'fastify PUT')
  }, { prefix: '/api' })
  const base = await listen(t, server)
  t.equal(await (await get(`${base}/api/x`, { method: 'PUT' })).text(), 'fastify PUT')
  t.equal(await (await get(`${base}/api/x`)).text(), 'hono GET /x')
  t.same(seen, ['GET /x'])
})
