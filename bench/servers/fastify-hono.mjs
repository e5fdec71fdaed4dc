// Variant 6: fastify-hono as it stands (the built dist/).
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { createApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyHono, { app: createApp(), prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
