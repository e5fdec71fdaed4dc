// Variant 2: plain Fastify routes returning the payloads. What users have
// today, and the baseline every ratio is computed against. Its routes are
// shared with the production-stack variants (fastify-stack, fastify-headers).
import { Readable } from 'node:stream'
import Fastify from 'fastify'
import {
  BIG_BODY, EIGHT_HEADERS, JSON_OBJECT, MIDDLEWARE_HEADER, PREFIX, RESOURCES, SSE_EVENTS, TEXT, sseEvent
} from '../payloads.mjs'

const TEXT_TYPE = 'text/plain; charset=UTF-8'

function * sseEvents () {
  for (let i = 0; i < SSE_EVENTS; i++) yield sseEvent(i)
}

export async function routes (fastify) {
  fastify.get('/text', (request, reply) => reply.type(TEXT_TYPE).send(TEXT))
  // Idiomatic Fastify: return the object (Fastify adds "; charset=utf-8").
  fastify.get('/json', async () => JSON_OBJECT)
  fastify.get('/headers', (request, reply) => reply.headers(EIGHT_HEADERS).type(TEXT_TYPE).send(TEXT))
  fastify.get('/big', (request, reply) => reply.type('application/octet-stream').send(BIG_BODY))
  fastify.post('/echo', async (request) => request.body)
  fastify.get('/sse', (request, reply) => reply
    .headers({ 'cache-control': 'no-cache', connection: 'keep-alive' })
    .type('text/event-stream')
    .send(Readable.from(sseEvents(), { objectMode: false })))

  // The equivalent of the Hono middleware: a CORS header before the handler
  // (as @fastify/cors does it) and a header added on the way out.
  await fastify.register(async (api) => {
    api.addHook('onRequest', async (request, reply) => { reply.header('access-control-allow-origin', '*') })
    api.addHook('onSend', async (request, reply, payload) => {
      reply.header(MIDDLEWARE_HEADER[0], MIDDLEWARE_HEADER[1])
      return payload
    })
    for (const resource of RESOURCES) {
      api.get(`/${resource}/:id`, async (request) => ({ resource, id: request.params.id }))
    }
  }, { prefix: '/api' })
  for (const resource of RESOURCES) {
    fastify.get(`/bare/${resource}/:id`, async (request) => ({ resource, id: request.params.id }))
  }
}

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await fastify.register(routes, { prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
