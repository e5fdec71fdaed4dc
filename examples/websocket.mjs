// WebSockets in a mounted Hono app: `upgradeWebSocket` from fastify-hono/ws
// (where an app served by @hono/node-server imports that package's own), and
// a `ws` WebSocketServer created with { noServer: true }. The upgrade goes
// through Fastify first: its routing, its hooks (here an onRequest hook that
// refuses a client without a token, with 401), its request log.
//
//   node examples/websocket.mjs
//   npx wscat -c 'ws://127.0.0.1:3000/chat/room?token=secret'
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { WebSocketServer } from 'ws'
import fastifyHono from 'fastify-hono'
import { upgradeWebSocket } from 'fastify-hono/ws'

export function createChatApp () {
  const app = new Hono()
  const members = new Set()
  app.get('/health', (c) => c.json({ members: members.size }))
  app.get('/room', upgradeWebSocket((c) => {
    const { log } = c.env.request
    return {
      onOpen (_event, ws) {
        members.add(ws)
        ws.send(JSON.stringify({ joined: true, members: members.size }))
      },
      onMessage (event) {
        // Text and binary alike, to everyone in the room.
        for (const member of members) member.send(event.data)
      },
      onClose (event, ws) {
        members.delete(ws)
        log.info({ code: event.code, reason: event.reason }, 'chat member left')
      }
    }
  }))
  return app
}

export async function build (options = {}) {
  const server = Fastify({ logger: options.logger ?? false })
  server.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/chat/room') && request.query.token !== 'secret') {
      return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'a token is required' })
    }
  })
  await server.register(fastifyHono, {
    app: createChatApp(),
    prefix: '/chat',
    // maxPayload bounds each incoming message (here 64 KiB).
    websocket: { server: new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 }) }
  })
  return server
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await build({ logger: true })
  await server.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${server.server.address().port}`
  console.log(`websocket example listening on ${base}
  npx wscat -c '${base.replace('http', 'ws')}/chat/room?token=secret'`)
}
