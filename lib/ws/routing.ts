import { type IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { fastifyWebsocketUpgrade } from '../internals/fastify-websocket.js'
import { endSocketSoon } from '../internals/incoming.js'
import { originForm, pathEnd } from '../request/url.js'
import type { WebSocketLike, WebSocketServerLike } from './types.js'

// Upgrade routing: upgrade requests under the mounts' prefixes go through
// Fastify's routing as ordinary requests, and fastify.close() stops that and
// closes the WebSockets of every mount.

/**
 * WebSockets for a mount registered with the `websocket` option: its
 * upgrades routed through Fastify, its WebSockets closed by
 * fastify.close(). Returns what accepting an upgrade takes (session.ts).
 */
export function mountWebSockets (fastify: FastifyInstance, websocket: { server: WebSocketServerLike, maxBufferedAmount: number, closeTimeout: number }): AcceptOptions {
  const registry = routeUpgrades(fastify, fastify.prefix)
  fastify.addHook('preClose', () => closeWebSockets(registry, fastify.server, websocket.closeTimeout))
  return { registry, server: websocket.server, maxBufferedAmount: websocket.maxBufferedAmount }
}

/** The socket and head of an upgrade routed by this module, on the request. */
const kRouted = Symbol('fastify-hono.routed-upgrade')

interface RoutedUpgrade { socket: Duplex, head: Buffer, onSocketError: () => void }

/** The socket and head of an upgrade request Fastify routed (by this module or @fastify/websocket), or undefined. */
export function upgradeOf (incoming: IncomingMessage): { socket: Duplex, head: Buffer } | undefined {
  return routedUpgradeOf(incoming) ?? fastifyWebsocketUpgrade(incoming)
}

/** The socket, head and error listener of an upgrade this module routed, or undefined. */
export function routedUpgradeOf (incoming: IncomingMessage): RoutedUpgrade | undefined {
  return (incoming as IncomingMessage & { [kRouted]?: RoutedUpgrade })[kRouted]
}

export interface AcceptOptions {
  registry: UpgradeRegistry
  server: WebSocketServerLike
  maxBufferedAmount: number
}

export interface UpgradeRegistry {
  fastify: FastifyInstance
  /** The mounts with WebSockets: their prefixes as path segments. */
  prefixes: string[][]
  /** The open WebSockets of every mount of the server. */
  sockets: Set<WebSocketLike>
  /** The sockets of upgrades routed and not yet accepted or answered (the app may still be in its middleware). */
  pending: Set<Duplex>
  /** Set once `fastify.close()` began: an upgrade the app accepts from then on is refused with 503. */
  closing: boolean
  listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void
  listening: boolean
}

const registries = new WeakMap<object, UpgradeRegistry>()

/**
 * Has upgrades under `prefix` routed through Fastify, as ordinary requests:
 * one 'upgrade' listener per server, whatever the number of mounts. It
 * decides after the other listeners have run (a microtask later): an
 * upgrade @fastify/websocket took is left to it; one no other listener
 * exists for is routed even outside the mounts, so that Fastify refuses it
 * cleanly (its not-found answer, then the socket closed); one outside the
 * mounts is left to the other listeners.
 */
function routeUpgrades (fastify: FastifyInstance, prefix: string): UpgradeRegistry {
  const server = fastify.server
  let registry = registries.get(server)
  if (registry === undefined) {
    const created: UpgradeRegistry = {
      fastify,
      prefixes: [],
      sockets: new Set(),
      pending: new Set(),
      closing: false,
      listening: false,
      listener (request, socket, head) {
        queueMicrotask(() => { routeUpgrade(created, server, request, socket, head) })
      }
    }
    registries.set(server, registry = created)
  }
  registry.prefixes.push(segments(prefix).map((part) => part.toLowerCase()))
  if (!registry.listening) {
    registry.listening = true
    server.on('upgrade', registry.listener)
  }
  return registry
}

/**
 * Stops routing upgrades and closes the open WebSockets with 1001, resolving
 * once they have all closed; those whose client has not answered within
 * `closeTimeout` are terminated (their onClose sees 1006). An upgrade still
 * in the app (its middleware, say) is refused with 503 if the app accepts it
 * later (acceptUpgrade), and its socket destroyed if it is still open after
 * `closeTimeout`.
 */
async function closeWebSockets (registry: UpgradeRegistry, server: object, closeTimeout: number): Promise<void> {
  registry.closing = true
  if (registry.listening) {
    registry.listening = false;
    (server as NodeJS.EventEmitter).removeListener('upgrade', registry.listener)
  }
  const closing: Array<Promise<void>> = []
  for (const ws of registry.sockets) {
    closing.push(new Promise((resolve) => { ws.once('close', () => resolve()) }))
    ws.close(1001, 'Server shutting down')
  }
  for (const socket of registry.pending) closing.push(new Promise((resolve) => { socket.once('close', () => resolve()) }))
  if (closing.length === 0) return
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      for (const ws of registry.sockets) ws.terminate()
      for (const socket of registry.pending) socket.destroy()
      resolve()
    }, closeTimeout)
  })
  await Promise.race([Promise.all(closing), late])
  clearTimeout(timer)
  await Promise.all(closing)
}

function routeUpgrade (registry: UpgradeRegistry, server: NodeJS.EventEmitter, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  if (socket.destroyed || fastifyWebsocketUpgrade(request) !== undefined) return
  if (server.listenerCount('upgrade') > 1 && !covers(registry.prefixes, request.url ?? '/')) return
  const onSocketError = (): void => { socket.destroy() }
  // Node removed its own error listener before emitting 'upgrade'.
  socket.on('error', onSocketError)
  registry.pending.add(socket)
  socket.once('close', () => { registry.pending.delete(socket) })
  const routed: RoutedUpgrade = { socket, head, onSocketError }
  ;(request as IncomingMessage & { [kRouted]?: RoutedUpgrade })[kRouted] = routed
  const response = new ServerResponse(request)
  response.shouldKeepAlive = false
  // An answer other than the upgrade is the last thing on the socket.
  response.once('finish', () => { endSocketSoon(socket) })
  try {
    response.assignSocket(socket as import('node:net').Socket)
    registry.fastify.routing(request, response)
  } catch (err) {
    registry.fastify.log.warn({ err }, 'fastify-hono: routing a WebSocket upgrade failed')
    refuse(socket, 500)
  }
}

/** Answers an upgrade with a bare status line and closes the socket. */
export function refuse (socket: Duplex, status: number): void {
  if (socket.destroyed) return
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
}

/** The path's segments, percent-decoded where they decode; empty ones (duplicate slashes) left out. */
function segments (path: string): string[] {
  return path.slice(0, pathEnd(path)).split('/').filter((part) => part !== '').map((part) => {
    try {
      return decodeURIComponent(part)
    } catch {
      return part
    }
  })
}

/**
 * Whether the target is under one of the prefixes, read loosely (decoded,
 * case-folded, duplicate slashes ignored, a parameter matching any segment):
 * Fastify's router decides for real once the upgrade is routed.
 */
function covers (prefixes: string[][], target: string): boolean {
  let path: string
  try {
    path = originForm(target)
  } catch {
    return false
  }
  const parts = segments(path).map((part) => part.toLowerCase())
  return prefixes.some((prefix) => prefix.length <= parts.length && prefix.every((part, i) =>
    part.startsWith(':') || part === '*' || part === parts[i]))
}
