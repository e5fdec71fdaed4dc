// Type-level tests for a default import in a CommonJS TypeScript file, with
// esModuleInterop: `import x from 'fastify-hono'` compiles to a require()
// whose synthetic default is the plugin. A line under @ts-expect-error must
// fail to compile.
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono, { fastifyHono as named, type FastifyHonoBindings, type FastifyHonoOptions, type FetchApp } from 'fastify-hono'

const api = new Hono<{ Bindings: FastifyHonoBindings }>()
api.get('/', (c) => c.text(c.env.reply.request.url))

const server = Fastify()
server.register(fastifyHono, { app: api, prefix: '/v2' })
server.register(named, { app: api, prefix: '/v3', stripPrefix: false })
const options: FastifyHonoOptions = { app: api, overrideGlobalObjects: false }
server.register(fastifyHono, options)
const fetchApp: FetchApp = { fetch: () => new Response('ok') }
server.register(named, { app: fetchApp })

// @ts-expect-error: stripPrefix is a boolean
server.register(fastifyHono, { app: api, stripPrefix: 'yes' })
// @ts-expect-error: an app needs a fetch method
server.register(named, { app: {} })
