// The servers of the migration group of targets.mjs: Fastify routes for
// `c.text()` and `c.json()`'s paths beside a mount of the benchmark's app,
// which has twins of both. `migration` is the mount's option, if any.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { createApp } from './app.mjs'
import { JSON_OBJECT, PREFIX, TEXT } from './payloads.mjs'

export async function createTwinServer (migration) {
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyHono, { app: createApp(), prefix: PREFIX, ...(migration === undefined ? {} : { migration }) })
  fastify.get(`${PREFIX}/text`, (_request, reply) => { reply.type('text/plain; charset=UTF-8').send(TEXT) })
  fastify.get(`${PREFIX}/json`, () => JSON_OBJECT)
  await fastify.ready()
  return fastify.server
}
