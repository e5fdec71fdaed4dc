// Reference variant (targets.mjs --base=<commit>): the fastify-hono-stack
// variant with the plugin as built from an earlier commit (see base.mjs):
// the A/B comparison of the way out after the stack's onSend hooks.
import Fastify from 'fastify'
import { createApp } from '../app.mjs'
import { loadBasePlugin } from '../base.mjs'
import { PREFIX } from '../payloads.mjs'
import { registerStack } from '../stack.mjs'

export async function createServer () {
  const fastifyHono = await loadBasePlugin()
  const fastify = Fastify({ logger: false })
  await registerStack(fastify)
  await fastify.register(fastifyHono, { app: createApp(), prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
