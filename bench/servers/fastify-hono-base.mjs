// Reference variant (targets.mjs --base=<commit>): the same app as the
// fastify-hono variant, with the plugin as built from an earlier commit (see
// base.mjs): the A/B comparison of the plugin now against the plugin then.
import Fastify from 'fastify'
import { createApp } from '../app.mjs'
import { loadBasePlugin } from '../base.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const fastifyHono = await loadBasePlugin()
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyHono, { app: createApp(), prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
