import { type IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { WSContext, WSEvents } from 'hono/ws'
import { fastifyWebsocketUpgrade } from '../internals/fastify-websocket.js'
import { endSocketSoon } from '../internals/incoming.js'
import { originForm } from '../request/url.js'

/**
 * The `ws` WebSocketServer the `websocket` option takes, as far as this
 * module uses it (declared here so that the types need no @types/ws).
 */
export interface WebSocketServerLike {
  options: { noServer?: boolean }
  handleUpgrade (request: IncomingMessage, socket: Duplex, head: Buffer, callback: (ws: any, request: IncomingMessage) => void): void
  on (event: 'headers', listener: (headers: string[], request: IncomingMessage) => void): unknown
  emit (event: string, ...args: any[]): boolean
}

export interface WebSocketOption {
  /** A `ws` WebSocketServer created with `{ noServer: true }` (bound messages with its `maxPayload`). */
  server: WebSocketServerLike
  /**
   * Bytes a WebSocket may hold unsent (`ws.raw.bufferedAmount`) before it is
   * closed with 1008: a client that does not read cannot grow server memory
   * without bound. Default 16 MiB; `Infinity` turns the bound off.
   */
  maxBufferedAmount?: number
  /**
   * Milliseconds `fastify.close()` waits for the clients to answer the 1001
   * close frame before it terminates the WebSockets left (default 5000).
   * Fastify's `forceCloseConnections` does not reach upgraded sockets.
   * Also bounds the wait for upgrades still in the app when the close began.
   */
  closeTimeout?: number
}

export const DEFAULT_MAX_BUFFERED_AMOUNT = 16 * 1024 * 1024
export const DEFAULT_CLOSE_TIMEOUT = 5000

/** The `ws` WebSocket that `ws.raw` holds, as far as these types describe it (cast to `import('ws').WebSocket` for the rest). */
export interface WebSocketLike {
  readonly readyState: number
  readonly protocol: string
  readonly bufferedAmount: number
  send (data: unknown, options: { compress?: boolean }): void
  close (code?: number, reason?: string): void
  terminate (): void
  on (event: string, listener: (...args: any[]) => void): unknown
  once (event: string, listener: (...args: any[]) => void): unknown
  ping (data?: unknown): void
}

/**
 * What the mount hands the helper in `c.env` during an upgrade, under a
 * registry symbol (so that a second copy of the module finds it too), and
 * what the helper leaves there for the mount.
 */
export interface UpgradeState {
  requested: boolean
  events: WSEvents<WebSocketLike> | undefined
  onError: ((err: unknown) => void) | undefined
  url: string
}

export const kUpgradeState = Symbol.for('fastify-hono.websocket-upgrade')

/** The socket and head of an upgrade routed by this module, on the request. */
const kRouted = Symbol('fastify-hono.routed-upgrade')

interface RoutedUpgrade { socket: Duplex, head: Buffer, onSocketError: () => void }

/** The socket and head of an upgrade request Fastify routed (by this module or @fastify/websocket), or undefined. */
export function upgradeOf (incoming: IncomingMessage): { socket: Duplex, head: Buffer } | undefined {
  return (incoming as unknown as Record<symbol, RoutedUpgrade | undefined>)[kRouted] ?? fastifyWebsocketUpgrade(incoming)
}

interface Registry {
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

const registries = new WeakMap<object, Registry>()

/**
 * Has upgrades under `prefix` routed through Fastify, as ordinary requests:
 * one 'upgrade' listener per server, whatever the number of mounts. It
 * decides after the other listeners have run (a microtask later): an
 * upgrade @fastify/websocket took is left to it; one no other listener
 * exists for is routed even outside the mounts, so that Fastify refuses it
 * cleanly (its not-found answer, then the socket closed); one outside the
 * mounts is left to the other listeners.
 */
export function routeUpgrades (fastify: FastifyInstance, prefix: string): Registry {
  const server = fastify.server
  let registry = registries.get(server)
  if (registry === undefined) {
    const created: Registry = {
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
export async function closeWebSockets (registry: Registry, server: object, closeTimeout: number): Promise<void> {
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

function routeUpgrade (registry: Registry, server: NodeJS.EventEmitter, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  if (socket.destroyed || fastifyWebsocketUpgrade(request) !== undefined) return
  if (server.listenerCount('upgrade') > 1 && !covers(registry.prefixes, request.url ?? '/')) return
  const onSocketError = (): void => { socket.destroy() }
  // Node removed its own error listener before emitting 'upgrade'.
  socket.on('error', onSocketError)
  registry.pending.add(socket)
  socket.once('close', () => { registry.pending.delete(socket) })
  const routed: RoutedUpgrade = { socket, head, onSocketError };
  (request as unknown as Record<symbol, RoutedUpgrade>)[kRouted] = routed
  const response = new ServerResponse(request)
  response.shouldKeepAlive = false
  // An answer other than the upgrade is the last thing on the socket.
  response.once('finish', () => { endSocket(socket) })
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

export function endSocket (socket: Duplex): void {
  endSocketSoon(socket)
}

/** The path's segments, percent-decoded where they decode; empty ones (duplicate slashes) left out. */
function segments (path: string): string[] {
  let end = path.length
  const query = path.indexOf('?')
  if (query !== -1) end = query
  const hash = path.indexOf('#')
  if (hash !== -1 && hash < end) end = hash
  return path.slice(0, end).split('/').filter((part) => part !== '').map((part) => {
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

// Headers the handshake owns or that describe the HTTP answer, as
// @hono/node-server leaves them out of the 101 (2.1.9).
const SKIPPED_HEADERS = new Set([
  'connection', 'content-length', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'sec-websocket-accept', 'sec-websocket-extensions', 'sec-websocket-protocol'
])

/** The extra header lines of each pending handshake, read by the server's one 'headers' listener. */
const pendingHeaders = new WeakMap<IncomingMessage, string[]>()
const listenedServers = new WeakSet<object>()

/**
 * The WebSocketServer's 'headers' listener, defined out here: a closure made
 * inside acceptUpgrade would keep that call's scope, and with it the first
 * upgrade request and reply, for the life of the server.
 */
function addPendingHeaders (headers: string[], request: IncomingMessage): void {
  const extra = pendingHeaders.get(request)
  if (extra !== undefined) headers.push(...extra)
}

function headerLines (reply: FastifyReply, response: Response): string[] {
  const lines: string[] = []
  const fromReply = reply.getHeaders()
  const fromApp = new Set<string>()
  response.headers.forEach((_, name) => { fromApp.add(name.toLowerCase()) })
  for (const name in fromReply) {
    const value = fromReply[name]
    if (value === undefined || SKIPPED_HEADERS.has(name.toLowerCase()) || fromApp.has(name.toLowerCase())) continue
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${String(one)}`)
  }
  response.headers.forEach((value, name) => {
    if (!SKIPPED_HEADERS.has(name.toLowerCase())) lines.push(`${name}: ${value}`)
  })
  return lines
}

export interface AcceptOptions {
  registry: Registry
  server: WebSocketServerLike
  maxBufferedAmount: number
}

/**
 * Completes an upgrade the app's route accepted: the handshake through the
 * WebSocketServer (which answers 400 itself to a malformed one), with the
 * headers the reply and the app's response set, then the app's events.
 */
export function acceptUpgrade (request: FastifyRequest, reply: FastifyReply, state: UpgradeState, upgrade: { socket: Duplex, head: Buffer }, response: Response, options: AcceptOptions): void {
  const { server, registry } = options
  const incoming = request.raw
  const { socket, head } = upgrade
  reply.hijack()
  registry.pending.delete(socket)
  if (socket.destroyed) return
  // fastify.close() began while the app decided: no handshake after the open WebSockets were closed.
  if (registry.closing) {
    refuse(socket, 503)
    return
  }
  const routed = (incoming as unknown as Record<symbol, RoutedUpgrade | undefined>)[kRouted]
  // `ws` listens for socket errors itself from here on.
  if (routed !== undefined) socket.removeListener('error', routed.onSocketError)
  const outgoing = reply.raw
  if (outgoing instanceof ServerResponse && outgoing.socket === socket) outgoing.detachSocket(socket as import('node:net').Socket)
  if (!listenedServers.has(server)) {
    listenedServers.add(server)
    server.on('headers', addPendingHeaders)
  }
  pendingHeaders.set(incoming, headerLines(reply, response))
  try {
    server.handleUpgrade(incoming, socket, head, (ws: WebSocketLike) => {
      pendingHeaders.delete(incoming)
      registry.sockets.add(ws)
      ws.once('close', () => { registry.sockets.delete(ws) })
      listen(ws, request, state, options.maxBufferedAmount)
      server.emit('connection', ws, incoming)
    })
  } catch (err) {
    pendingHeaders.delete(incoming)
    request.log.error({ err }, 'fastify-hono: WebSocket handshake failed')
    socket.destroy()
  }
}

// Node 20 and 22 have neither CloseEvent nor ErrorEvent as globals.
class CloseEventLike extends Event {
  readonly code: number
  readonly reason: string
  readonly wasClean: boolean
  constructor (type: string, init: { code: number, reason: string, wasClean: boolean }) {
    super(type)
    this.code = init.code
    this.reason = init.reason
    this.wasClean = init.wasClean
  }
}

class ErrorEventLike extends Event {
  readonly error: unknown
  readonly message: string
  constructor (type: string, init: { error: unknown }) {
    super(type)
    this.error = init.error
    this.message = init.error instanceof Error ? init.error.message : String(init.error)
  }
}

/**
 * The event Hono's onMessage gets: a real MessageEvent (`instanceof`, its
 * other fields and methods are the native ones), built without an init
 * dictionary, whose conversion is most of what `new MessageEvent('message',
 * { data })` costs on Node 24 (about 0.5 of 1 µs per message); `data` is
 * read from the subclass.
 */
const HonoMessageEvent = class MessageEvent extends globalThis.MessageEvent<string | ArrayBuffer> {
  readonly #data: string | ArrayBuffer
  constructor (data: string | ArrayBuffer) {
    super('message')
    this.#data = data
  }

  override get data (): string | ArrayBuffer { return this.#data }
}

function createCloseEvent (code: number, reason: string): CloseEvent {
  const Native = (globalThis as { CloseEvent?: typeof CloseEvent }).CloseEvent
  const init = { code, reason, wasClean: code !== 1006 }
  return Native !== undefined ? new Native('close', init) : new CloseEventLike('close', init) as unknown as CloseEvent
}

function createErrorEvent (error: unknown): Event {
  const Native = (globalThis as { ErrorEvent?: typeof ErrorEvent }).ErrorEvent
  return Native !== undefined ? new Native('error', { error }) : new ErrorEventLike('error', { error })
}

/** A message as Hono's helpers pass it: text as a string, binary as an ArrayBuffer. */
function messageData (data: unknown, isBinary: boolean): string | ArrayBuffer {
  const bytes = Array.isArray(data) ? Buffer.concat(data as Buffer[]) : data
  if (bytes instanceof ArrayBuffer) return isBinary ? bytes : Buffer.from(bytes).toString('utf8')
  const view = bytes as Buffer
  if (!isBinary) return view.toString('utf8')
  // A copy of the message alone (the Buffer is a view into what the socket
  // read). Not ArrayBuffer.prototype.slice: on Node 20 it costs about 2.5 µs
  // for 1 KiB, against about 1.4 µs for this (0.8–1.1 µs both on Node 24).
  const copy = new ArrayBuffer(view.byteLength)
  new Uint8Array(copy).set(view)
  return copy
}

function listen (ws: WebSocketLike, request: FastifyRequest, state: UpgradeState, maxBufferedAmount: number): void {
  const events = state.events ?? {}
  const report = (err: unknown): void => {
    if (state.onError !== undefined) state.onError(err)
    else request.log.error({ err }, 'fastify-hono: WebSocket event handler failed')
  }
  const run = (call: () => unknown): void => {
    try {
      const result = call()
      if (typeof (result as Promise<unknown> | undefined)?.then === 'function') (result as Promise<unknown>).then(undefined, report)
    } catch (err) {
      report(err)
    }
  }
  const init = {
    send (source: string | ArrayBuffer | Uint8Array, options: { compress?: boolean }) {
      if (ws.readyState !== 1) return
      ws.send(source, { compress: options?.compress })
      // A client that does not read: close rather than buffer without bound.
      if (ws.bufferedAmount > maxBufferedAmount) ws.close(1008, 'Send buffer limit exceeded')
    },
    close (code?: number, reason?: string) { ws.close(code, reason) },
    raw: ws,
    get readyState () { return ws.readyState as 0 | 1 | 2 | 3 },
    url: state.url,
    protocol: ws.protocol === '' ? null : ws.protocol
  }
  const ctx = createContext(init)
  ws.on('message', (data: unknown, isBinary: boolean) => {
    if (events.onMessage === undefined) return
    const event = new HonoMessageEvent(messageData(data, isBinary))
    run(() => events.onMessage!(event, ctx))
  })
  ws.on('close', (code: number, reason: Buffer) => {
    if (events.onClose !== undefined) run(() => events.onClose!(createCloseEvent(code, reason.toString()), ctx))
  })
  ws.on('error', (error: unknown) => {
    if (events.onError !== undefined) run(() => events.onError!(createErrorEvent(error), ctx))
  })
  if (events.onOpen !== undefined) run(() => events.onOpen!(new Event('open'), ctx))
}

let WSContextClass: (new (init: unknown) => WSContext<WebSocketLike>) | undefined

function createContext (init: object): WSContext<WebSocketLike> {
  // hono/ws's own class, so that `instanceof WSContext` holds in the app.
  WSContextClass ??= (require('hono/ws') as { WSContext: new (init: unknown) => WSContext<WebSocketLike> }).WSContext
  return new WSContextClass(init)
}
