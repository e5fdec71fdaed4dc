// @ts-check
// Type-level tests for a JavaScript consumer: in a JavaScript file TypeScript
// follows require('fastify-hono') to the CommonJS declarations, as an editor
// does. A line under @ts-expect-error must fail to compile.
'use strict'

const fastify = require('fastify')
const { Hono } = require('hono')
const fastifyHono = require('fastify-hono')
const { fastifyHono: named } = require('fastify-hono')

/** @type {Hono<{ Bindings: import('fastify-hono').FastifyHonoBindings }>} */
const api = new Hono()
api.get('/', (c) => c.text(c.env.request.id))

const server = fastify()
server.register(fastifyHono, { app: api, prefix: '/v2' })
server.register(named, { app: api, prefix: '/v3' })
server.register(fastifyHono.default, { app: api, prefix: '/v4' })

/** @type {import('fastify-hono').FastifyHonoOptions} */
const options = { app: api, notFound: 'fastify' }
server.register(fastifyHono, options)

// @ts-expect-error: notFound is 'hono' or 'fastify'
server.register(fastifyHono, { app: api, notFound: 'express' })
// @ts-expect-error: app is required
server.register(named, { prefix: '/x' })
