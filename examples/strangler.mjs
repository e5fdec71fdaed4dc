// Strangler migration: a Hono app mounted at `/`, beside the Fastify routes
// that have not moved yet. Routes move one at a time: write the route in the
// Hono app, delete it from Fastify. Until then, Fastify's own route wins,
// because find-my-way prefers a static or parametric route to the mount's
// catch-all. With `notFound: 'fastify'`, a request that no Hono route
// matches goes on to Fastify's not-found handler, so clients see one 404
// format whichever side a path lives on.
//
//   node examples/strangler.mjs
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'

/** The routes that already moved to Hono. */
export function createMigratedApp () {
  const users = new Map([
    ['1', { id: '1', name: 'Ada' }],
    ['2', { id: '2', name: 'Grace' }]
  ])
  const app = new Hono()
  app.get('/users', (c) => c.json([...users.values()]))
  app.get('/users/:id', (c) => {
    const user = users.get(c.req.param('id'))
    // A matched route that answers 404 itself: this stays Hono's answer.
    if (user === undefined) return c.json({ error: 'no such user' }, 404)
    return c.json({ ...user, servedBy: 'hono', requestId: c.env.request.id })
  })
  app.post('/users', async (c) => {
    const { name } = await c.req.json()
    const id = String(users.size + 1)
    users.set(id, { id, name })
    return c.json({ id, name }, 201)
  })
  return app
}

export async function build (options = {}) {
  const server = Fastify({ logger: options.logger ?? false })

  // Hooks run around both sides: this header is on every response.
  server.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })

  // The routes still in Fastify.
  const orders = [{ id: 'o-1', total: 42 }]
  server.get('/orders', async () => orders)
  server.get('/orders/:id', async (request, reply) => {
    const order = orders.find((o) => o.id === request.params.id)
    if (order === undefined) return reply.code(404).send({ error: 'no such order' })
    return { ...order, servedBy: 'fastify' }
  })

  // One not-found answer for the whole server, Hono's unmatched requests included.
  server.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: 'Not Found', method: request.method, path: request.url })
  })

  // Mounted at `/` (no prefix): everything Fastify has no route for.
  await server.register(fastifyHono, { app: createMigratedApp(), notFound: 'fastify' })
  return server
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await build({ logger: true })
  await server.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${server.server.address().port}`
  console.log(`strangler example listening on ${base}
  curl ${base}/orders        # still Fastify
  curl ${base}/users/1       # moved to Hono
  curl ${base}/nowhere       # Hono has no route: Fastify's not-found handler answers`)
}
