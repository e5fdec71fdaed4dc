// Production stack: the benchmark's Hono app mounted with fastify-hono under
// cookie, compress, helmet, cors and rate-limit (stack.mjs).
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { createApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'
import { registerStack } from '../stack.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await registerStack(fastify)
  await fastify.register(fastifyHono, { app: createApp(), prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
