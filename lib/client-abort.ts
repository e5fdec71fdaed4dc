import type { ServerResponse } from 'node:http'
import type { Http2ServerResponse } from 'node:http2'

const kClientAbort = Symbol('fastify-hono.clientAbort')
type Outgoing = (ServerResponse | Http2ServerResponse) & { [kClientAbort]?: ClientAbort }

/**
 * The request's abort signal: it aborts when the response closes before it
 * finished, that is when the client went away. The AbortController is only
 * made when someone asks for the signal; the close is watched from the start.
 * Fastify's own `request.signal` is not used: in 5.12.x it aborts about 4 ms
 * after a POST body has been read, while the handler still runs.
 */
export class ClientAbort {
  private closedEarly = false
  private controller: AbortController | undefined

  constructor (outgoing: ServerResponse | Http2ServerResponse) {
    (outgoing as Outgoing)[kClientAbort] = this
    outgoing.on('close', onOutgoingClose)
  }

  get signal (): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.closedEarly) this.controller.abort()
    }
    return this.controller.signal
  }

  /** @internal */
  closed (): void {
    this.closedEarly = true
    this.controller?.abort()
  }
}

// One shared listener: no closure per request.
function onOutgoingClose (this: Outgoing): void {
  if (!this.writableFinished) this[kClientAbort]?.closed()
}
