import { Buffer } from 'node:buffer'
import { IncomingMessage, type ServerResponse } from 'node:http'
import type { Http2ServerResponse } from 'node:http2'
import type { Readable } from 'node:stream'
import { errorCodes } from 'fastify'

/**
 * The request body as a web stream read straight from the Node stream that
 * Fastify handed to the passthrough parser, with `bodyLimit` enforced while
 * it is read: Fastify does not enforce it for a parser without `parseAs`
 * (checked on 5.12.8). Past the limit the stream errors, so the app never
 * takes a truncated body for a complete one, and `exceeded` tells the route
 * to answer 413 whatever the app made of the error.
 */
export class RequestBody {
  exceeded = false
  /** Read to its end by the app: nothing left to discard. */
  ended = false
  private readonly source: Readable
  private readonly limit: number
  /** Removes the listeners of the read in progress, if any. */
  private detachReader: (() => void) | undefined

  /**
   * Once the response is done, whatever the app left unread is discarded, so
   * the next request on a keep-alive connection gets parsed. (Node only does
   * this itself for a body nobody started to read.)
   */
  discard (): void {
    this.detachReader?.()
    if (!this.source.readableEnded) this.source.resume()
  }

  /**
   * Called once the app has answered: a body it did not read to the end is
   * discarded when the response is done (the app may still be reading it
   * while a streamed response goes out). A body read already needs nothing.
   */
  afterApp (outgoing: ServerResponse | Http2ServerResponse): void {
    if (this.ended) return
    if (outgoing.writableFinished) this.discard()
    else outgoing.once('finish', () => this.discard())
  }

  constructor (source: Readable, limit: number) {
    this.source = source
    this.limit = limit
  }

  /**
   * The whole body, read straight from the Node stream without a web stream
   * (what text() and json() need), with the same limit and abort handling:
   * the bytes themselves when they are all here already, else a promise.
   */
  read (): Buffer | Promise<Buffer> {
    const complete = this.takeComplete()
    if (complete !== undefined) {
      if (complete.length <= this.limit) return complete
      this.exceeded = true
      return Promise.reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      let length = 0
      this.attach({
        chunk: (chunk) => { chunks.push(chunk); length += chunk.length },
        end: () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)),
        fail: reject
      })
      this.source.resume()
    })
  }

  /**
   * The whole body at once, when Node's HTTP/1 parser has received all of it
   * and nothing has touched the stream (most bodies arrive with their
   * headers): one read() of what the stream holds, no listeners. Public API
   * only (Node 20–26): `complete` is set once the parser has pushed the last
   * chunk and the end, and a paused stream's read() returns its whole buffer.
   * Otherwise undefined, and the body is read as a stream.
   */
  private takeComplete (): Buffer | undefined {
    const source = this.source
    if (!(source instanceof IncomingMessage) || !source.complete || source.readableFlowing !== null || source.readableDidRead) return undefined
    const data = source.read() as Buffer | null
    this.ended = true
    return data ?? Buffer.alloc(0)
  }

  stream (): ReadableStream<Uint8Array> {
    const source = this.source
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        source.pause() // before the 'data' listener, so that it does not start the flow
        this.attach({
          chunk: (chunk) => {
            controller.enqueue(chunk)
            if ((controller.desiredSize ?? 0) <= 0) source.pause()
          },
          end: () => controller.close(),
          fail: (err) => controller.error(err)
        })
      },
      pull () {
        source.resume()
      },
      cancel: () => {
        // The app does not want the rest: discard it, so the connection
        // stays usable for the next request.
        this.discard()
      }
    })
  }

  /** Feeds the source to `sink`, counting bytes against the limit; `detachReader` undoes it. */
  private attach (sink: BodySink): void {
    const { source, limit } = this
    // A source that will emit nothing more: the client went away while the
    // app was busy elsewhere, or the body was discarded once the response
    // was done. Listening would leave the read pending forever.
    if (source.destroyed || source.readableEnded) {
      sink.fail(source.readableEnded ? bodyGone() : bodyAborted())
      return
    }
    let received = 0
    const detach = (): void => {
      this.detachReader = undefined
      source.off('data', onData)
      source.off('end', onEnd)
      source.off('error', onError)
      source.off('close', onClose)
    }
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > limit) {
        this.exceeded = true
        detach()
        source.pause()
        sink.fail(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
        return
      }
      sink.chunk(chunk)
    }
    const onEnd = (): void => {
      detach()
      this.ended = true
      sink.end()
    }
    const onError = (err: Error): void => {
      detach()
      sink.fail(err)
    }
    // An aborted upload closes the source without 'end' (and, depending on
    // the Node version, without 'error'): the read must reject, not hang.
    const onClose = (): void => {
      detach()
      sink.fail(bodyAborted())
    }
    this.detachReader = detach
    source.on('data', onData)
    source.on('end', onEnd)
    source.on('error', onError)
    source.on('close', onClose)
  }
}

function bodyAborted (): Error {
  return Object.assign(new Error('Request body aborted'), { code: 'ECONNRESET' })
}

function bodyGone (): Error {
  return new Error('Request body already consumed or discarded')
}

interface BodySink {
  chunk (chunk: Buffer): void
  end (): void
  fail (err: Error): void
}
