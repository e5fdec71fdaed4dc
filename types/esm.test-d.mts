// Type-level tests for an ES module consumer: the default import and the
// named import are the plugin, and the types are named exports. Each line under a
// ts-expect-error directive must fail to compile.
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono, { fastifyHono as named, type FastifyHonoBindings, type FastifyHonoOptions, type FetchApp } from 'fastify-hono'

const api = new Hono<{ Bindings: FastifyHonoBindings }>()
api.get('/', (c) => c.text(c.env.request.url))
const server = Fastify()
server.register(fastifyHono, { app: api, prefix: '/v2' })
server.register(named, { app: api, prefix: '/v3' })
const options: FastifyHonoOptions = { app: api, stripPrefix: false }
server.register(fastifyHono, options)
const fetchApp: FetchApp = { fetch: (request) => new Response(request.method) }
server.register(named, { app: fetchApp })

// @ts-expect-error: notFound is 'hono' or 'fastify'
server.register(fastifyHono, { app: api, notFound: 404 })
// @ts-expect-error: app is required
server.register(named, {})
