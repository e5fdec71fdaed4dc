// Reference variant (text and json): the Hono app mounted with fastify-hono
// under helmet, cors and rate-limit only. No onSend hook, so the fast writer
// sends the response, with the headers those hooks set merged into its head.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { createApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'
import { registerStack } from '../stack.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await registerStack(fastify, { onSend: false })
  await fastify.register(fastifyHono, { app: createApp(), prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
