// Type-level tests for an ES module consumer: the default import is the plugin.
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono, { fastifyHono as named, type FastifyHonoBindings } from 'fastify-hono'

const api = new Hono<{ Bindings: FastifyHonoBindings }>()
api.get('/', (c) => c.text(c.env.request.url))
const server = Fastify()
server.register(fastifyHono, { app: api, prefix: '/v2' })
server.register(named, { app: api, prefix: '/v3' })
// @ts-expect-error: notFound is 'hono' or 'fastify'
server.register(fastifyHono, { app: api, notFound: 404 })
