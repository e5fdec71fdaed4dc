// Reference variant (text and json only): fastify-hono around a bare fetch()
// that builds the very Responses the Hono app's c.text() and c.json() build,
// with no Hono in between. Its ratio to the Fastify route is the plugin's own
// cost; what the fastify-hono variant adds on top of it is Hono's dispatch.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { JSON_OBJECT, PREFIX, TEXT } from '../payloads.mjs'

const app = {
  fetch (request) {
    // What hono 4.13's c.json() passes: no status, its own header record.
    if (request.url.endsWith('/json')) {
      return new Response(JSON.stringify(JSON_OBJECT), { status: undefined, headers: { 'Content-Type': 'application/json' } })
    }
    if (request.url.endsWith('/text')) return new Response(TEXT) // c.text()'s shortcut
    return new Response('404 Not Found', { status: 404 })
  }
}

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyHono, { app, prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
