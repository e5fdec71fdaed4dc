// Production stack, baseline: the plain Fastify routes (fastify-plain.mjs)
// under cookie, compress, helmet, cors and rate-limit (stack.mjs).
import Fastify from 'fastify'
import { PREFIX } from '../payloads.mjs'
import { registerStack } from '../stack.mjs'
import { routes } from './fastify-plain.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await registerStack(fastify)
  await fastify.register(routes, { prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
