// WebSocket variant: @hono/node-server 2.x standalone, serving the same Hono
// echo app (mounted under the prefix) with its own upgradeWebSocket and a
// `ws` WebSocketServer in noServer mode. Hono without Fastify.
import { createAdaptorServer, upgradeWebSocket } from '@hono/node-server'
import { Hono } from 'hono'
import { WebSocketServer } from 'ws'
import { createWsApp } from '../ws-app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const app = new Hono().route(PREFIX, createWsApp(upgradeWebSocket))
  return createAdaptorServer({ fetch: app.fetch, websocket: { server: new WebSocketServer({ noServer: true }) } })
}
