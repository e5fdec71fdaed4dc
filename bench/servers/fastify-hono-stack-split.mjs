// Reference variant, production stack (param case only): the benchmark
// app's parameter routes as one mount per resource, each a Hono app with
// a single route under its own prefix (`/h/bare/users`: `/:id`), instead of
// one mount of the whole app. Fastify's router picks the mount; each app's
// router matches one dynamic route instead of 32. Answers what
// fastify-hono-stack answers on those paths.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { Hono } from 'hono'
import { PREFIX, RESOURCES } from '../payloads.mjs'
import { registerStack } from '../stack.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await registerStack(fastify)
  for (const resource of RESOURCES) {
    const app = new Hono()
    app.get('/:id', (c) => c.json({ resource, id: c.req.param('id') }))
    await fastify.register(fastifyHono, { app, prefix: `${PREFIX}/bare/${resource}` })
  }
  await fastify.ready()
  return fastify.server
}
