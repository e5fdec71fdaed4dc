// WebSocket reference variant: fastify-hono as in ws-fastify-hono.mjs, but
// the Hono app answers each message on `ws.raw` (the `ws` WebSocket), from a
// listener it adds in onOpen, as the Buffer `ws` gave it: no MessageEvent,
// no string or ArrayBuffer conversion. What an app can do today where those
// conversions matter.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { upgradeWebSocket } from 'fastify-hono/ws'
import { WebSocketServer } from 'ws'
import { createWsApp } from '../ws-app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyHono, {
    app: createWsApp(upgradeWebSocket, { raw: true }),
    prefix: PREFIX,
    websocket: { server: new WebSocketServer({ noServer: true }) }
  })
  await fastify.ready()
  return fastify.server
}
