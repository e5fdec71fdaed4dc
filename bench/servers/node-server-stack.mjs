// Production stack, Hono's side: @hono/node-server standalone with
// hono/secure-headers, hono/cors and hono/compress in front of the app
// (stack.mjs says what has no Hono counterpart).
import { createAdaptorServer } from '@hono/node-server'
import { createApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'
import { honoStack } from '../stack.mjs'

export async function createServer () {
  return createAdaptorServer({ fetch: honoStack(createApp(), PREFIX).fetch })
}
