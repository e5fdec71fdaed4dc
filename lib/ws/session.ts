import { type IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { WSContext } from 'hono/ws'
import { refuse, routedUpgradeOf, type AcceptOptions } from './routing.js'
import { kUpgradeState, type UpgradeState, type WebSocketLike } from './types.js'

// The WebSocket session: the handshake of an upgrade the app accepted, then
// the socket's events delivered to the app's handlers.

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

/**
 * Offers the app a WebSocket for this upgrade: the state the helper of
 * fastify-hono/ws finds in `c.env` and fills in when the app's route calls
 * it (requested, with the app's event handlers).
 */
export function offerWebSocket (env: object): UpgradeState {
  const state: UpgradeState = { requested: false, events: undefined, onError: undefined, url: '' }
  ;(env as { [kUpgradeState]?: UpgradeState })[kUpgradeState] = state
  return state
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
  const routed = routedUpgradeOf(incoming)
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
