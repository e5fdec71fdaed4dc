// Moving a route with proof (docs/migration.md): the Hono rewrite of
// `GET /users/:id` is mirrored (each request also runs through it once the
// client has Fastify's answer, and the two answers are compared), and
// `POST /orders` sends a share of its requests to its rewrite, kept per user
// by the `x-user` header. `GET /migration` shows where the migration stands;
// `PUT /migration/share` changes the share without a restart.
//
//   node examples/migration.mjs
//   curl http://127.0.0.1:3000/users/1 && curl http://127.0.0.1:3000/migration
//   curl -X PUT http://127.0.0.1:3000/migration/share -H 'content-type: application/json' -d '{"percent":50}'
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'

const users = new Map([['1', { id: '1', name: 'Ada', joined: '2021-03-04' }], ['2', { id: '2', name: 'Grace', joined: '2022-07-08' }]])

/** The rewrite. Its user answer differs from Fastify's in one field: `joined` is a date-time now. */
export function createRewrite () {
  const app = new Hono()
  app.get('/users/:id', (c) => {
    const user = users.get(c.req.param('id'))
    if (user === undefined) return c.json({ error: 'no such user' }, 404)
    return c.json({ ...user, joined: `${user.joined}T00:00:00Z`, servedAt: new Date().toISOString() })
  })
  app.post('/orders', async (c) => c.json({ item: (await c.req.json()).item, by: 'hono' }, 201))
  app.get('/health', (c) => c.text('ok'))
  return app
}

export async function build (options = {}) {
  const fastify = Fastify({ logger: options.logger ?? false })
  // The mount first: the mirror adds hooks to the Fastify routes registered after it.
  await fastify.register(fastifyHono, {
    app: createRewrite(),
    migration: {
      routes: {
        'GET /users/:id': { mirror: { sample: 1, ignore: ['/servedAt'] } },
        'POST /orders': { share: 10, sticky: { header: 'x-user' } }
      }
    }
  })
  // The routes not moved yet.
  fastify.get('/users/:id', async (request, reply) => {
    const user = users.get(request.params.id)
    if (user === undefined) return reply.code(404).send({ error: 'no such user' })
    return { ...user, servedAt: new Date().toISOString() }
  })
  fastify.post('/orders', async (request, reply) => reply.code(201).send({ item: request.body.item, by: 'fastify' }))
  // Where it stands, and the share turned up or down at runtime.
  fastify.get('/migration', async () => fastify.honoMigration())
  fastify.put('/migration/share', async (request) => {
    fastify.setHonoShare('POST /orders', request.body.percent)
    return fastify.honoMigration().find((route) => route.method === 'POST' && route.url === '/orders')
  })
  return fastify
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fastify = await build({ logger: true })
  await fastify.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${fastify.server.address().port}`
  console.log(`migration example listening on ${base}
  curl ${base}/users/1 && curl ${base}/migration`)
  console.log(fastify.printHonoMigration())
}
