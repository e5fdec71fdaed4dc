// Several Hono apps, each under its own prefix. Each registration is its own
// Fastify scope with its own catch-all route, so each app keeps its own
// middleware and its own 404. By default an app sees paths relative to its
// mount point (`/users/42` reaches the users app as `/42`); an app built with
// `basePath` already includes the prefix in its routes, so it is mounted
// with `stripPrefix: false` and sees the full path.
//
//   node examples/sub-apps.mjs
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'

export function createUsersApp () {
  const users = new Hono()
  users.get('/', (c) => c.json([{ id: '1' }, { id: '2' }]))
  users.get('/:id', (c) => c.json({ app: 'users', id: c.req.param('id'), path: c.req.path }))
  users.notFound((c) => c.json({ app: 'users', error: 'no such users route', path: c.req.path }, 404))
  return users
}

export function createAdminApp () {
  const admin = new Hono()
  admin.use('*', async (c, next) => {
    await next()
    c.header('x-admin', 'yes')
  })
  admin.get('/stats', (c) => c.json({ app: 'admin', path: c.req.path }))
  return admin
}

/** Built for its final location: its routes already carry `/api/v1`. */
export function createApiV1App () {
  const v1 = new Hono().basePath('/api/v1')
  v1.get('/health', (c) => c.json({ app: 'api-v1', ok: true, path: c.req.path }))
  v1.get('/items/:id', (c) => c.json({ app: 'api-v1', id: c.req.param('id'), path: c.req.path }))
  return v1
}

export async function build (options = {}) {
  const server = Fastify({ logger: options.logger ?? false })
  server.get('/', async () => ({ mounts: ['/users', '/admin', '/api/v1'] }))
  await server.register(fastifyHono, { app: createUsersApp(), prefix: '/users' })
  await server.register(fastifyHono, { app: createAdminApp(), prefix: '/admin' })
  await server.register(fastifyHono, { app: createApiV1App(), prefix: '/api/v1', stripPrefix: false })
  return server
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await build({ logger: true })
  await server.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${server.server.address().port}`
  console.log(`sub-apps example listening on ${base}
  curl ${base}/users/42          # the users app sees /42
  curl ${base}/admin/stats       # the admin app sees /stats
  curl ${base}/api/v1/health     # the basePath app sees /api/v1/health`)
}
