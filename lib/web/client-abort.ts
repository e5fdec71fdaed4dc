import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'

type Outgoing = ServerResponse | Http2ServerResponse
type Incoming = IncomingMessage | Http2ServerRequest

/**
 * The request's abort signal: it aborts when the response closes before it
 * finished, that is when the client went away; if the connection is already
 * gone, it is aborted at once. Callers make it when someone asks for it (the
 * lightweight Request's getter), or when a native Request needs it. Fastify's
 * own `request.signal` is not used: in 5.12.x it aborts about 4 ms after a
 * POST body has been read, while the handler still runs.
 */
export function clientAbortSignal (incoming: Incoming, outgoing: Outgoing): AbortSignal {
  const controller = new AbortController()
  if (clientGone(incoming, outgoing)) {
    controller.abort()
  } else {
    outgoing.once('close', () => { if (!outgoing.writableFinished || streamReset(incoming)) controller.abort() })
  }
  return controller.signal
}

/**
 * An HTTP/2 stream the client reset (RST_STREAM with an error code, such as
 * CANCEL): Http2ServerResponse then emits 'finish' before 'close' (Node 20
 * to 26), so `writableFinished` alone cannot tell. @hono/node-server aborts
 * the signal there too (2.1.5).
 */
function streamReset (incoming: Incoming): boolean {
  const code = ((incoming as Http2ServerRequest).stream as { rstCode?: number } | undefined)?.rstCode
  return code !== undefined && code !== 0 /* NGHTTP2_NO_ERROR */
}

/** The response is gone without having finished: the client disconnected. */
export function clientGone (incoming: Incoming, outgoing: Outgoing): boolean {
  if (outgoing.writableFinished) return false
  if (outgoing.destroyed) return true
  const stream = (incoming as Http2ServerRequest).stream as { destroyed?: boolean } | undefined
  if (stream !== undefined) return stream.destroyed === true
  // The request's socket: a pipelined response gets one only when its turn comes.
  const socket = incoming.socket
  return socket === null || socket.destroyed
}
