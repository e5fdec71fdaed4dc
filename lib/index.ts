import fp from 'fastify-plugin'
import { fastifyHonoPlugin } from './plugin.js'

/** The Fastify plugin that serves a Hono app (or any fetch app) under a prefix. */
const fastifyHono = fp(fastifyHonoPlugin, {
  fastify: '5.x',
  name: 'fastify-hono',
  // Keep the scope: the prefix applies and the passthrough body parser stays inside it.
  encapsulate: true
})

export default fastifyHono
export { fastifyHono }
export type { FastifyHonoBindings, FetchApp } from './bindings.js'
export type { FastifyHonoOptions } from './options.js'

// require('fastify-hono') returns the plugin itself, as with @fastify/* plugins;
// fastify-plugin has already set its `default` and `fastifyHono` properties.
module.exports = fastifyHono
