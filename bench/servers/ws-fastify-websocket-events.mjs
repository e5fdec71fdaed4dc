// WebSocket reference variant: the @fastify/websocket echo route, doing per
// message what Hono's helpers do before the app sees it (@hono/node-server's
// and fastify-hono's alike): text decoded to a string, binary copied into an
// ArrayBuffer of its own, a MessageEvent around it; then it sends
// `event.data` back, as the Hono echo app does. No Hono: against the plain
// route, the cost of Hono's WebSocket events; against fastify-hono, what
// the plugin adds beyond them.
import Fastify from 'fastify'
import fastifyWebsocket from '@fastify/websocket'
import { wsStats } from '../ws-app.mjs'
import { PREFIX } from '../payloads.mjs'

function messageData (data, isBinary) {
  if (!isBinary) return data.toString('utf8')
  return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)
}

export async function createServer () {
  const fastify = Fastify({ logger: false })
  await fastify.register(fastifyWebsocket)
  await fastify.register(async (scope) => {
    scope.get('/ws', { websocket: true }, (socket) => {
      wsStats.opened++
      socket.on('message', (data, isBinary) => {
        wsStats.messages++
        const event = new MessageEvent('message', { data: messageData(data, isBinary) })
        socket.send(event.data)
      })
    })
  }, { prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
