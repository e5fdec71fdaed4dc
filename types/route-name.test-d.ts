// Type-level tests of `request.honoRoute`, declared by the package on
// Fastify's request (CommonJS consumer; route-name.test-d.mts for ES modules).
import Fastify, { type FastifyRequest } from 'fastify'
import { Hono } from 'hono'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'

const app = new Hono<{ Bindings: FastifyHonoBindings }>()
app.get('/users/:id', (c) => c.text(c.env.request.honoRoute ?? 'none'))

const server = Fastify()
server.register(fastifyHono, { app, prefix: '/v2' })
server.addHook('onResponse', async (request) => {
  const route: string | undefined = request.honoRoute
  const label: string = request.honoRoute ?? request.routeOptions.url ?? '__unknown__'
  request.log.info({ route, label })
  // @ts-expect-error: undefined where no Hono route answered
  const sure: string = request.honoRoute
  // @ts-expect-error: read-only, set by the plugin
  request.honoRoute = '/v2/users/:id'
  return sure
})

export function routeOf (request: FastifyRequest): string | undefined {
  return request.honoRoute
}
