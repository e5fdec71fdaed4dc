import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { slots } from './find-symbol.js'

/**
 * The socket and head of an upgrade that @fastify/websocket routed through
 * Fastify: its 'upgrade' listener stores them on the request, as own
 * properties under private symbols described 'ws-socket' and 'ws-head'
 * (checked on @fastify/websocket 11.3.7). Undefined when they are not there:
 * the mount then treats the request as an ordinary one (if that changes, the
 * app's upgrade answers 500 under @fastify/websocket, never a double handler).
 */
export function fastifyWebsocketUpgrade (incoming: IncomingMessage): { socket: Duplex, head: Buffer } | undefined {
  let socket: Duplex | undefined
  let head: Buffer | undefined
  for (const symbol of Object.getOwnPropertySymbols(incoming)) {
    if (symbol.description === 'ws-socket') socket = (slots(incoming)[symbol] as Duplex)
    else if (symbol.description === 'ws-head') head = (slots(incoming)[symbol] as Buffer)
  }
  if (socket === undefined || typeof socket.write !== 'function') return undefined
  return { socket, head: head ?? Buffer.alloc(0) }
}
