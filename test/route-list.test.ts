import { test } from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

// What is mounted, visible: fastify.honoRoutes() on the instance (any
// scope), and a debug line per mount at registration. Each listed route is
// then requested over a socket, to show the listing says what is served.

function users (): Hono {
  const app = new Hono()
  app.use('*', async (_c, next) => { await next() }) // middleware: not a route
  app.get('/', (c) => c.text('index'))
  app.get('/users/:id', (c) => c.json({ id: c.req.param('id') }))
  app.post('/users', (c) => c.text('created', 201))
  return app
}

function collect (): { stream: Writable, lines: Array<{ level: number, msg: string, prefix?: string, routes?: string[] }> } {
  const lines: Array<{ level: number, msg: string, prefix?: string, routes?: string[] }> = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text))
      callback()
    }
  })
  return { stream, lines }
}

test('fastify.honoRoutes() lists every mount\'s routes, prefix included, from the root and from any scope', async (t) => {
  const server = Fastify()
  t.teardown(() => server.close())
  const app = users()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  let fromScope: unknown
  await server.register(async (scope) => {
    await scope.register(fastifyHono, { app: new Hono().basePath('/v3').get('/items/:n', (c) => c.text(c.req.param('n'))), prefix: '/v3', stripPrefix: false })
    fromScope = scope.honoRoutes()
  })
  await server.register(fastifyHono, { app: { fetch: () => new Response('fetch app') }, prefix: '/raw' })
  // Added after registration: served, and listed.
  app.delete('/users/:id', (c) => c.body(null, 204))
  const { base } = await listen(server)

  const listed = server.honoRoutes()
  t.same(listed, [
    { method: 'GET', url: '/v2', prefix: '/v2' },
    { method: 'GET', url: '/v2/users/:id', prefix: '/v2' },
    { method: 'POST', url: '/v2/users', prefix: '/v2' },
    { method: 'DELETE', url: '/v2/users/:id', prefix: '/v2' },
    { method: 'GET', url: '/v3/items/:n', prefix: '/v3' }
  ])
  t.same(fromScope, listed.slice(0, 3).concat(listed.slice(4)), 'the same list from inside a scope (as it was then)')
  t.notMatch(server.printRoutes(), 'users', 'printRoutes shows only the catch-alls')

  // Every listed route answers where it says.
  const statuses: number[] = []
  for (const { method, url } of listed) {
    const res = await fetch(base + url.replace(':id', '7').replace(':n', '3'), { method })
    await res.arrayBuffer()
    statuses.push(res.status)
  }
  t.same(statuses, [200, 200, 201, 204, 200])
})

test('at registration, a debug line lists the mount\'s routes; nothing at info', async (t) => {
  const debug = collect()
  const server = Fastify({ logger: { level: 'debug', stream: debug.stream } })
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app: users(), prefix: '/v2' })
  await server.register(fastifyHono, { app: { fetch: () => new Response('x') }, prefix: '/raw' })
  await server.ready()
  const mounted = debug.lines.filter((line) => line.msg.startsWith('fastify-hono: '))
  t.same(mounted.map(({ level, msg, prefix, routes }) => ({ level, msg, prefix, routes })), [
    { level: 20, msg: 'fastify-hono: mounted at /v2, 3 routes', prefix: '/v2', routes: ['GET /v2', 'GET /v2/users/:id', 'POST /v2/users'] },
    { level: 20, msg: 'fastify-hono: a fetch app mounted at /raw (its routes are its own)', prefix: '/raw', routes: [] }
  ])

  const info = collect()
  const quiet = Fastify({ logger: { level: 'info', stream: info.stream } })
  t.teardown(() => quiet.close())
  await quiet.register(fastifyHono, { app: users(), prefix: '/v2' })
  await quiet.ready()
  t.same(info.lines.filter((line) => line.msg.startsWith('fastify-hono: ')), [], 'no line at info')
})
