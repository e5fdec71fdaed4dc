// WebSocket variant: @fastify/websocket with a plain Fastify echo route (no
// Hono): what Fastify users have today. It sends each message back as the
// Buffer `ws` gave it, in a frame of the same type.
import Fastify from 'fastify'
import fastifyWebsocket from '@fastify/websocket'
import { wsStats } from '../ws-app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyWebsocket)
  await fastify.register(async (scope) => {
    scope.get('/ws', { websocket: true }, (socket) => {
      wsStats.opened++
      socket.on('message', (data, isBinary) => {
        wsStats.messages++
        socket.send(data, { binary: isBinary })
      })
    })
  }, { prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
