// Type-level tests for `import x = require('fastify-hono')` in a CommonJS
// TypeScript file. The declarations use `export =` with a namespace, so the
// plugin, its named and default properties and its types are all reachable
// from the one binding. A line under @ts-expect-error must fail to compile.
import Fastify = require('fastify')
import { Hono } from 'hono'
import fastifyHono = require('fastify-hono')

const api = new Hono<{ Bindings: fastifyHono.FastifyHonoBindings }>()
api.get('/', (c) => c.text(c.env.request.id))

const server = Fastify()
server.register(fastifyHono, { app: api, prefix: '/v2' })
server.register(fastifyHono.fastifyHono, { app: api, prefix: '/v3' })
server.register(fastifyHono.default, { app: api, prefix: '/v4', notFound: 'fastify' })

const options: fastifyHono.FastifyHonoOptions = { app: api, bodyLimit: 1024 }
server.register(fastifyHono, options)
const fetchApp: fastifyHono.FetchApp = { fetch: (request) => new Response(request.url) }
server.register(fastifyHono, { app: fetchApp })

// The properties are the plugin itself.
const same: typeof fastifyHono = fastifyHono.default
server.register(same.fastifyHono, { app: api })

// @ts-expect-error: notFound is 'hono' or 'fastify'
server.register(fastifyHono, { app: api, notFound: 'express' })
// @ts-expect-error: app is required
server.register(fastifyHono.default, { prefix: '/x' })
// @ts-expect-error: the namespace has no such type
export type Missing = fastifyHono.Nothing
