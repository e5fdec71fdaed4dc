// Type-level tests of fastify-hono/ws (ES module consumer).
import Fastify from 'fastify'
import { Hono } from 'hono'
import { WebSocketServer } from 'ws'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'
import { upgradeWebSocket, type WebSocketLike } from 'fastify-hono/ws'

const app = new Hono<{ Bindings: FastifyHonoBindings }>()
app.get('/ws', upgradeWebSocket((c) => ({
  onMessage (event, ws) {
    const data: unknown = event.data
    const raw: WebSocketLike | undefined = ws.raw
    const buffered: number | undefined = raw?.bufferedAmount
    ws.send(JSON.stringify({ data, buffered, id: c.env.request.id }))
    ws.close(1000, 'done')
  }
}), { onError: (err: unknown) => { console.error(err) } }))

const server = Fastify()
server.register(fastifyHono, { app, websocket: { server: new WebSocketServer({ noServer: true }), maxBufferedAmount: 1024 } })
// @ts-expect-error: the option needs a server
server.register(fastifyHono, { app, websocket: {} })
