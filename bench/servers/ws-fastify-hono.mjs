// WebSocket variant: fastify-hono (the built dist/) mounting the Hono echo
// app under the prefix, with fastify-hono/ws's upgradeWebSocket and a `ws`
// WebSocketServer in noServer mode.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { upgradeWebSocket } from 'fastify-hono/ws'
import { WebSocketServer } from 'ws'
import { createWsApp } from '../ws-app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyHono, {
    app: createWsApp(upgradeWebSocket),
    prefix: PREFIX,
    websocket: { server: new WebSocketServer({ noServer: true }) }
  })
  await fastify.ready()
  return fastify.server
}
