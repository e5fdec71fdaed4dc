// Type-level tests for `const x = require('fastify-hono')` in a CommonJS
// TypeScript file. TypeScript types require() as returning `any` in a
// TypeScript file (it only follows require() calls in JavaScript files: see
// require-js.test-d.cjs), so the binding is annotated with the type of the
// module that require() loads: `typeof import()` in a CommonJS file resolves
// the require condition, like require() itself. Each line under a
// ts-expect-error directive must fail to compile.
import Fastify = require('fastify')
import { Hono } from 'hono'

const fastifyHono: typeof import('fastify-hono') = require('fastify-hono')
const { fastifyHono: named, default: fromDefault }: typeof import('fastify-hono') = require('fastify-hono')

const api = new Hono<{ Bindings: import('fastify-hono').FastifyHonoBindings }>()
api.get('/', (c) => c.text(c.env.fastify.prefix))

const server = Fastify()
server.register(fastifyHono, { app: api, prefix: '/v2' })
server.register(named, { app: api, prefix: '/v3' })
server.register(fromDefault, { app: api, prefix: '/v4' })

// @ts-expect-error: bodyLimit is a number
server.register(fastifyHono, { app: api, bodyLimit: '1mb' })
// @ts-expect-error: notFound is 'hono' or 'fastify'
server.register(named, { app: api, notFound: 404 })
