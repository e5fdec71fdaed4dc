import type { Http2ServerResponse } from 'node:http2'
import type { Duplex } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { endSocketSoon } from './internals/incoming.js'
import { isHttp2 } from './internals/node.js'

/**
 * The response streams the mounts are writing, per server, so that
 * `fastify.close()` can end them: an endless stream (SSE) would otherwise
 * hold the server open until the process is killed (Fastify waits for every
 * response in flight). Ending one cancels the app's stream (Hono's `onAbort`
 * runs) and lets its writer end the response as after a last chunk, so the
 * client sees a complete response (on HTTP/1, the chunked terminator) and can
 * reconnect elsewhere. The connection then closes (Node's server closes the
 * idle ones when `close()` begins, not those that go idle later). A
 * stream that starts after the close began is ended at once, after its head.
 */

/** What a writer reads from: cancelling it ends the writer's loop as a last chunk would. */
interface Cancellable { cancel (reason?: unknown): Promise<void> }

interface Streams {
  closing: boolean
  open: Map<Cancellable, FastifyReply>
}

const byServer = new WeakMap<object, Streams>()
/** Whether any server has begun closing: the per-request check costs a boolean until then. */
let anyClosing = false

function streamsOf (server: object): Streams {
  let streams = byServer.get(server)
  if (streams === undefined) byServer.set(server, streams = { closing: false, open: new Map() })
  return streams
}

/**
 * Tracks the reader of a stream a writer is sending on `reply`, until the
 * raw response closes.
 */
export function trackStream (reply: FastifyReply, reader: Cancellable): void {
  const streams = streamsOf(reply.server.server)
  if (streams.closing) {
    end(reply, reader)
    return
  }
  streams.open.set(reader, reply)
  reply.raw.once('close', () => { streams.open.delete(reader) })
}

/** Ends every stream tracked for `server` (the Node server), and any tracked from now on. */
export function endOpenStreams (server: object): void {
  const streams = streamsOf(server)
  streams.closing = true
  anyClosing = true
  for (const [reader, reply] of streams.open) end(reply, reader)
  streams.open.clear()
}

/**
 * An HTTP/1 response the mount writes after `fastify.close()` began (a slow
 * request in flight) goes out with `Connection: close`: Node closes the idle
 * connections when the close begins, not those that go idle later, so a
 * keep-alive client would hold the server open until its keep-alive timeout.
 */
export function closeConnectionIfClosing (reply: FastifyReply): void {
  if (anyClosing && !isHttp2(reply.raw) && byServer.get(reply.server.server)?.closing === true) reply.header('connection', 'close')
}

function end (reply: FastifyReply, reader: Cancellable): void {
  const closeConnection = connectionCloser(reply)
  if (closeConnection !== undefined) reply.raw.once('finish', closeConnection)
  reader.cancel().catch(() => {})
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
