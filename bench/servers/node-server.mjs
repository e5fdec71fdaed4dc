// Variant 3: @hono/node-server standalone. Hono without Fastify.
import { createAdaptorServer } from '@hono/node-server'
import { createRootApp } from '../app.mjs'

export async function createServer () {
  return createAdaptorServer({ fetch: createRootApp().fetch })
}
