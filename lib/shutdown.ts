import type { Http2ServerResponse } from 'node:http2'
import { constants as http2Constants } from 'node:http2'
import type { Duplex } from 'node:stream'
import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import { endSocketSoon } from './internals/incoming.js'
import { isHttp2 } from './internals/node.js'
import type { StartedBody } from './reply/complete-body.js'

/**
 * What `fastify.close()` does to the work the mounts have in flight, per
 * server. Fastify waits for every response in flight before close()
 * resolves; the close bound (the `closeTimeout` option) says how long that
 * wait may be for the responses the mounts stream, and for the promises
 * handed to `c.executionCtx.waitUntil()`:
 * - an event stream (`text/event-stream`) never ends by itself: it is ended
 *   at once, as after a last event (the app's `onAbort` runs, the client
 *   sees a complete response and reconnects elsewhere with its
 *   Last-Event-ID);
 * - any other stream is left to finish, until the bound runs out from the
 *   moment the close began; one still open then is cut so that the client
 *   can tell (HTTP/1: the connection destroyed, no last chunk, a short
 *   Content-Length body; HTTP/2: the stream reset with INTERNAL_ERROR), and the cut
 *   is logged at warn;
 * - a stream that starts after the close began follows the same rules;
 * - the connection of every stream that ends during the close closes after
 *   it (Node closes the idle connections when the close begins, not those
 *   that go idle later, and Fastify keeps them 72 s);
 * - the waitUntil promises are awaited once the server has closed, until
 *   the same bound runs out, and those left are counted in a warning.
 * With several mounts on one server, the largest bound of theirs applies.
 */

/** One stream a writer is sending. */
interface Tracked {
  readonly reply: FastifyReply
  readonly body: StartedBody
  readonly since: number
}

export interface ServerShutdown {
  /** The close bound in ms: the largest of the server's mounts. */
  bound: number
  /** Date.now() when the close began, or undefined before. */
  closedAt: number | undefined
  readonly streams: Set<Tracked>
  cutTimer: NodeJS.Timeout | undefined
  /** The waitUntil promises still pending (each settles without rejecting). */
  readonly background: Set<Promise<void>>
  /** Once the server has closed: the wait for `background`. */
  backgroundDone: Promise<void> | undefined
}

const byServer = new WeakMap<object, ServerShutdown>()
/** Whether any server has begun closing: the per-request check costs a boolean until then. */
let anyClosing = false

/**
 * The shutdown state of a Node server, made at a mount's registration with
 * its close bound (the largest bound of the server's mounts wins).
 */
export function shutdownOf (server: object, bound: number): ServerShutdown {
  let shutdown = byServer.get(server)
  if (shutdown === undefined) {
    shutdown = { bound, closedAt: undefined, streams: new Set(), cutTimer: undefined, background: new Set(), backgroundDone: undefined }
    byServer.set(server, shutdown)
  } else if (bound > shutdown.bound) {
    shutdown.bound = bound
  }
  return shutdown
}

/** The preClose step, once per server: event streams end, the others get until the bound. */
export function beginClose (shutdown: ServerShutdown): void {
  if (shutdown.closedAt !== undefined) return
  shutdown.closedAt = Date.now()
  anyClosing = true
  for (const tracked of shutdown.streams) closing(shutdown, tracked)
  scheduleCut(shutdown)
}

/**
 * Tracks a stream a writer is sending on `reply`, until the raw response
 * closes: the stream writer's own pump, or reply.send's.
 */
export function trackStream (reply: FastifyReply, body: StartedBody): void {
  const shutdown = byServer.get(reply.server.server)
  if (shutdown === undefined) return
  const tracked: Tracked = { reply, body, since: Date.now() }
  shutdown.streams.add(tracked)
  reply.raw.once('close', () => { untrack(shutdown, tracked) })
  if (shutdown.closedAt !== undefined) {
    closing(shutdown, tracked)
    scheduleCut(shutdown)
  }
}

/**
 * An HTTP/1 response the mount writes after `fastify.close()` began (a slow
 * request in flight) goes out with `Connection: close`: Node closes the idle
 * connections when the close begins, not those that go idle later, so a
 * keep-alive client would hold the server open until its keep-alive timeout.
 */
export function closeConnectionIfClosing (reply: FastifyReply): void {
  if (anyClosing && !isHttp2(reply.raw) && byServer.get(reply.server.server)?.closedAt !== undefined) reply.header('connection', 'close')
}

/**
 * Keeps a waitUntil promise until it settles; a rejection is logged with the
 * request's logger (its id), never left unhandled.
 */
export function keepUntilSettled (shutdown: ServerShutdown, promise: unknown, log: FastifyBaseLogger): void {
  const background = shutdown.background
  const settled: Promise<void> = Promise.resolve(promise).then(() => {
    background.delete(settled)
  }, (err: unknown) => {
    background.delete(settled)
    log.error({ err }, 'a promise passed to c.executionCtx.waitUntil() rejected')
  })
  background.add(settled)
}

/**
 * The onClose step, once the server has closed: waits for the waitUntil
 * promises until the close bound runs out (promises added meanwhile too),
 * then warns of those it gave up on. Once per server, whichever mount asks.
 */
export function waitForBackground (shutdown: ServerShutdown, log: FastifyBaseLogger): Promise<void> {
  shutdown.backgroundDone ??= settleBackground(shutdown, log)
  return shutdown.backgroundDone
}

async function settleBackground (shutdown: ServerShutdown, log: FastifyBaseLogger): Promise<void> {
  const background = shutdown.background
  if (background.size === 0) return
  const deadline = (shutdown.closedAt ?? Date.now()) + shutdown.bound
  let timer: NodeJS.Timeout | undefined
  const outOfTime = new Promise<'out of time'>((resolve) => { timer = setTimeout(resolve, Math.max(0, deadline - Date.now()), 'out of time') })
  try {
    while (background.size > 0) {
      const result = await Promise.race([Promise.all(background), outOfTime])
      if (result === 'out of time') {
        log.warn({ pending: background.size, closeTimeout: shutdown.bound }, `fastify.close() gave up on ${background.size} c.executionCtx.waitUntil() promise(s) still pending after closeTimeout`)
        return
      }
    }
  } finally {
    clearTimeout(timer)
  }
}

/** A stream met by the close: an event stream ends now; the connection closes after any stream. */
function closing (shutdown: ServerShutdown, tracked: Tracked): void {
  const closeConnection = connectionCloser(tracked.reply)
  if (closeConnection !== undefined) tracked.reply.raw.once('finish', closeConnection)
  if (tracked.body.eventStream) {
    untrack(shutdown, tracked)
    // The writer ends the response as after a last chunk.
    tracked.body.reader.cancel().catch(nothing)
  }
}

function untrack (shutdown: ServerShutdown, tracked: Tracked): void {
  shutdown.streams.delete(tracked)
  if (shutdown.streams.size === 0 && shutdown.cutTimer !== undefined) {
    clearTimeout(shutdown.cutTimer)
    shutdown.cutTimer = undefined
  }
}

/** While the close is on and streams are open: cut them when the bound runs out. */
function scheduleCut (shutdown: ServerShutdown): void {
  if (shutdown.streams.size === 0 || shutdown.cutTimer !== undefined) return
  const left = shutdown.closedAt! + shutdown.bound - Date.now()
  if (left <= 0) {
    cutAll(shutdown)
    return
  }
  shutdown.cutTimer = setTimeout(() => {
    shutdown.cutTimer = undefined
    cutAll(shutdown)
  }, left)
  shutdown.cutTimer.unref()
}

function cutAll (shutdown: ServerShutdown): void {
  const now = Date.now()
  for (const tracked of [...shutdown.streams]) {
    untrack(shutdown, tracked)
    cut(tracked, now, shutdown.bound)
  }
}

/**
 * Ends a stream so that its client can tell it was cut: on HTTP/1 the
 * connection is destroyed (no last chunk, a short length), on HTTP/2 the
 * stream is reset (RST_STREAM with INTERNAL_ERROR: Node's client reports
 * CANCEL as no error, and CANCEL says the peer no longer wants the stream).
 * The writer sees the close, and cancels the app's stream (its onAbort runs).
 */
function cut (tracked: Tracked, now: number, bound: number): void {
  const { reply, body } = tracked
  const raw = reply.raw
  if (raw.destroyed || raw.writableFinished) return
  reply.log.warn({
    route: reply.request.honoRoute ?? reply.request.routeOptions.url,
    method: reply.request.method,
    bytes: body.sent,
    ms: now - tracked.since,
    closeTimeout: bound
  }, 'response stream cut: still open when fastify.close() ran out of closeTimeout')
  if (isHttp2(raw)) {
    const stream = (raw as Partial<Pick<Http2ServerResponse, 'stream'>>).stream
    if (stream !== undefined && !stream.destroyed) {
      stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR)
      return
    }
  }
  raw.destroy()
}

/**
 * What closes the response's connection once it has finished: on HTTP/1 the
 * socket, after what was written; on HTTP/2 the session, gracefully (GOAWAY,
 * its other streams may finish), as Node 24 does itself on `server.close()`.
 */
function connectionCloser (reply: FastifyReply): (() => void) | undefined {
  const raw = reply.raw
  if (isHttp2(raw)) {
    const session = (raw as Partial<Pick<Http2ServerResponse, 'stream'>>).stream?.session
    return session === undefined ? undefined : () => { if (!session.closed && !session.destroyed) session.close() }
  }
  const socket = raw.socket as Duplex | null
  // No socket of its own (fastify.inject()'s fake one has no end()): nothing to close.
  if (socket === null || typeof socket.end !== 'function') return undefined
  return () => { endSocketSoon(socket) }
}

function nothing (): undefined {
  return undefined
}
