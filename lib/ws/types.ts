import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { WSEvents } from 'hono/ws'

// What the WebSocket wing's parts share: the option's shape, the socket as
// the helper sees it, and the state an upgrade carries through the app.

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
   * close frame before it terminates the WebSockets left (default: the
   * mount's `closeTimeout`, 5000 unless set).
   * Fastify's `forceCloseConnections` does not reach upgraded sockets.
   * Also bounds the wait for upgrades still in the app when the close began.
   */
  closeTimeout?: number
}

export const DEFAULT_MAX_BUFFERED_AMOUNT = 16 * 1024 * 1024

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
