// The WebSocket benchmark's shared parts: the echo route's path, the
// messages, the counters every server keeps, and the Hono echo app that the
// plugin and @hono/node-server both serve (each with its own helper).
import { Hono } from 'hono'
import { PREFIX } from './payloads.mjs'

/** The echo route, under the prefix, in every server. */
export const WS_PATH = `${PREFIX}/ws`

/**
 * The echo cases: one message each, sent as it is by every connection and
 * expected back byte for byte, in a frame of the same type.
 */
export const wsCases = [
  { id: 'text-64', binary: false, bytes: 64 },
  { id: 'text-1k', binary: false, bytes: 1024 },
  { id: 'binary-1k', binary: true, bytes: 1024 }
]

export function wsCaseById (id) {
  const found = wsCases.find((c) => c.id === id)
  if (found === undefined) throw new Error(`Unknown WebSocket case "${id}" (known: ${wsCases.map((c) => c.id).join(', ')})`)
  return found
}

/** A case's message: printable ASCII for text (JSON-like), every byte value for binary. */
export function wsMessage ({ binary, bytes }) {
  if (binary) return Buffer.from(Array.from({ length: bytes }, (_, i) => (i * 31 + 7) & 0xff))
  const unit = '{"type":"tick","seq":12345,"user":"ada","text":"hello, world"}'
  return Buffer.from(unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes))
}

/**
 * What each server counts, in its own process: messages its echo handler
 * answered and WebSockets it opened. The handlers increment these directly,
 * the one line of bookkeeping every variant pays alike.
 */
export const wsStats = { messages: 0, opened: 0 }

/**
 * The Hono echo app, mounted under PREFIX by its server, with the given
 * `upgradeWebSocket`. With `raw`, the app answers on `ws.raw` (the `ws`
 * WebSocket) from onOpen instead of through onMessage: what an app can do
 * to skip the conversions of Hono's message events.
 */
export function createWsApp (upgradeWebSocket, { raw = false } = {}) {
  const app = new Hono()
  if (raw) {
    app.get('/ws', upgradeWebSocket(() => ({
      onOpen (_event, ws) {
        wsStats.opened++
        ws.raw.on('message', (data, isBinary) => {
          wsStats.messages++
          ws.raw.send(data, { binary: isBinary })
        })
      }
    })))
    return app
  }
  app.get('/ws', upgradeWebSocket(() => ({
    onOpen () { wsStats.opened++ },
    onMessage (event, ws) {
      wsStats.messages++
      ws.send(event.data)
    }
  })))
  return app
}

/**
 * The servers, each a module under servers/ exporting createServer() (an
 * http.Server, not yet listening), run each in its own process. `compared`:
 * the two the plugin is measured against. `reference`: references that
 * split the ratios, not bounded.
 */
export const wsVariants = [
  { id: 'fastify-hono', label: 'fastify-hono + Hono upgradeWebSocket', module: './servers/ws-fastify-hono.mjs' },
  { id: 'fastify-websocket', label: '@fastify/websocket route', module: './servers/ws-fastify-websocket.mjs', compared: true },
  { id: 'node-server', label: '@hono/node-server + its upgradeWebSocket', module: './servers/ws-node-server.mjs', compared: true },
  { id: 'fastify-hono-raw', label: 'fastify-hono, the app answering on ws.raw (reference)', module: './servers/ws-fastify-hono-raw.mjs', reference: true },
  { id: 'fastify-websocket-events', label: '@fastify/websocket route converting as Hono does (reference)', module: './servers/ws-fastify-websocket-events.mjs', reference: true },
  { id: 'ws', label: 'ws on node:http (reference)', module: './servers/ws-plain.mjs', reference: true }
]

export function wsVariantById (id) {
  const found = wsVariants.find((v) => v.id === id)
  if (found === undefined) throw new Error(`Unknown WebSocket variant "${id}" (known: ${wsVariants.map((v) => v.id).join(', ')})`)
  return found
}
