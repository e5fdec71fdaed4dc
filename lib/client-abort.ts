import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'

type Outgoing = ServerResponse | Http2ServerResponse
type Incoming = IncomingMessage | Http2ServerRequest

/**
 * The request's abort signal: it aborts when the response closes before it
 * finished, that is when the client went away. Nothing is allocated or
 * listened to until someone asks for the signal; then, if the connection is
 * already gone, it is aborted at once. Fastify's own `request.signal` is not
 * used: in 5.12.x it aborts about 4 ms after a POST body has been read, while
 * the handler still runs.
 */
export class ClientAbort {
  private readonly incoming: Incoming
  private readonly outgoing: Outgoing
  private controller: AbortController | undefined

  constructor (incoming: Incoming, outgoing: Outgoing) {
    this.incoming = incoming
    this.outgoing = outgoing
  }

  get signal (): AbortSignal {
    let controller = this.controller
    if (controller === undefined) {
      controller = this.controller = new AbortController()
      const outgoing = this.outgoing
      if (closedEarly(this.incoming, outgoing)) {
        controller.abort()
      } else {
        const abort = (): void => { if (!outgoing.writableFinished) controller!.abort() }
        outgoing.once('close', abort)
      }
    }
    return controller.signal
  }
}

/** The response is gone without having finished: the client disconnected. */
function closedEarly (incoming: Incoming, outgoing: Outgoing): boolean {
  if (outgoing.writableFinished) return false
  if (outgoing.destroyed) return true
  const stream = (incoming as Http2ServerRequest).stream as { destroyed?: boolean } | undefined
  if (stream !== undefined) return stream.destroyed === true
  // The request's socket: a pipelined response gets one only when its turn comes.
  const socket = incoming.socket
  return socket === null || socket.destroyed
}
