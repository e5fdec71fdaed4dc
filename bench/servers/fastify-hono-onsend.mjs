// Variant 7: fastify-hono with a no-op onSend hook, which rules out any fast
// path and forces its reply.send fallback.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { createApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  fastify.addHook('onSend', async (request, reply, payload) => payload)
  await fastify.register(fastifyHono, { app: createApp(), prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
