// Type-level tests of the public API (CommonJS consumer). `npm run test:types`
// compiles them; a line under @ts-expect-error must fail to compile.
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono, { fastifyHono as named, type FastifyHonoBindings, type FastifyHonoOptions } from 'fastify-hono'

const api = new Hono<{ Bindings: FastifyHonoBindings }>()
api.get('/users/:id', (c) => {
  const id: string = c.req.param('id')
  const requestId: string = c.env.request.id
  const method: string | undefined = c.env.incoming.method
  const sent: boolean = c.env.reply.sent
  // Undefined during a WebSocket upgrade.
  const statusCode: number | undefined = c.env.outgoing?.statusCode
  c.env.fastify.log.info({ id }, 'typed')
  return c.json({ id, requestId, method, sent, statusCode })
})

const server = Fastify()
server.register(fastifyHono, { app: api, prefix: '/v2' })
server.register(named, { app: api, prefix: '/v3', stripPrefix: false, notFound: 'fastify', bodyLimit: 1024, overrideGlobalObjects: false })
// Any object with a fetch handler is an app.
server.register(fastifyHono, { app: { fetch: (request: Request) => new Response(request.url) } })

const options: FastifyHonoOptions = { app: new Hono() }
server.register(fastifyHono, options)

// @ts-expect-error: app is required
server.register(fastifyHono, { prefix: '/x' })
// @ts-expect-error: an app needs a fetch method
server.register(fastifyHono, { app: {} })
// @ts-expect-error: notFound is 'hono' or 'fastify'
server.register(fastifyHono, { app: api, notFound: 'express' })
// @ts-expect-error: stripPrefix is a boolean
server.register(fastifyHono, { app: api, stripPrefix: 'yes' })
// @ts-expect-error: bodyLimit is a number
server.register(fastifyHono, { app: api, bodyLimit: '1mb' })
server.register(fastifyHono, { app: api, prefix: '/v4', drainTimeout: 200, drainLimit: 1024 })
// @ts-expect-error: drainLimit is a number of bytes
server.register(fastifyHono, { app: api, drainLimit: '1mb' })
// @ts-expect-error: drainTimeout is a number of milliseconds
server.register(fastifyHono, { app: api, drainTimeout: '1s' })

// @ts-expect-error: bindings have no such field
api.get('/x', (c) => c.text(c.env.nothing))
