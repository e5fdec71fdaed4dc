// Reference variant (text and json): the plain Fastify routes under helmet,
// cors and rate-limit only, the stack's plugins that set headers from
// onRequest hooks and add no onSend hook.
import Fastify from 'fastify'
import { PREFIX } from '../payloads.mjs'
import { registerStack } from '../stack.mjs'
import { routes } from './fastify-plain.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await registerStack(fastify, { onSend: false })
  await fastify.register(routes, { prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
