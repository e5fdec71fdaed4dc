import { Buffer } from 'node:buffer'
import { IncomingMessage, type ServerResponse } from 'node:http'
import { constants as http2Constants, type Http2ServerRequest } from 'node:http2'
import type { Readable } from 'node:stream'
import { errorCodes, type FastifyReply } from 'fastify'
import { markClientBodyError } from '../errors.js'
import { bufferedRest, closeConnection, beforeUnreadBodyIsDumped } from '../internals/incoming.js'
import { isHttp2 } from '../internals/node.js'

/** How long and how much of an unread body is read once the response is out: see afterApp. */
export interface DrainBounds {
  /** Milliseconds from the end of the response. */
  readonly timeout: number
  /** Bytes read and thrown away. */
  readonly limit: number
}

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
  /** The whole body, once read() has given it (what the app parsed: see body-errors.ts). */
  bytes: Buffer | undefined = undefined
  private readonly source: Readable
  /** The request itself (the source, unless a preParsing hook replaced it). */
  private readonly incoming: IncomingMessage | Http2ServerRequest
  private readonly limit: number
  private readonly bounds: DrainBounds
  /** Bytes handed to the app so far. */
  private received = 0
  /** We started reading the source (anyone else reading it made the body unusable). */
  private touched = false
  /** The response is done and the rest of the body was let go. */
  private released = false
  /** Removes the listeners of the read in progress, if any, and fails that read. */
  private detachReader: ((err?: Error) => void) | undefined

  constructor (source: Readable, incoming: IncomingMessage | Http2ServerRequest, limit: number, bounds: DrainBounds) {
    this.source = source
    this.incoming = incoming
    this.limit = limit
    this.bounds = bounds
  }

  /**
   * Called once the app has answered. A body it did not read to the end is
   * let go when the response is done (the app may still be reading it while
   * a streamed response goes out): see release. A body read already needs
   * nothing, nor does an HTTP/1 body that arrived whole and that nobody
   * touched (Node discards it itself). When the declared length of an
   * untouched body is already over the drain limit, the response says
   * `Connection: close`.
   */
  afterApp (reply: FastifyReply): void {
    if (this.ended) return
    const incoming = this.incoming
    const source = this.source
    if (isHttp2(incoming)) {
      // Http2ServerResponse emits 'finish' only once the stream has closed,
      // which a client that never ends its upload never lets happen: wait
      // for the end of the stream's own writable side instead.
      const stream = (incoming as Http2ServerRequest).stream
      if (stream.writableFinished) this.release()
      else stream.once('finish', () => this.release())
      return
    }
    if (!this.touched && source === incoming && source.readableFlowing === null && !source.readableDidRead) {
      if ((incoming as IncomingMessage).complete) return
      const declared = incoming.headers['content-length']
      if (declared !== undefined && Number(declared) > this.bounds.limit) reply.header('connection', 'close')
    }
    const outgoing = reply.raw
    if (outgoing.writableFinished) this.release()
    else beforeUnreadBodyIsDumped(outgoing as ServerResponse, () => this.release())
  }

  /**
   * The response is done: whatever the app left unread is let go, so that
   * the connection serves the next request, within bounds. A read still in
   * progress fails. Over HTTP/2 the stream is closed (RST_STREAM with
   * NO_ERROR, as RFC 9113 §8.1 allows once the response is complete). Over
   * HTTP/1 the rest is read and thrown away, for at most `bounds.timeout`
   * ms and `bounds.limit` bytes, after which the connection closes. A body
   * that has fully arrived is simply emptied (no bytes are left on the wire).
   */
  private release (): void {
    if (this.released) return
    this.released = true
    this.touched = true
    this.detachReader?.(bodyGone())
    const source = this.source
    if (source.readableEnded || source.destroyed) return
    const incoming = this.incoming
    if (arrived(incoming)) {
      source.resume()
      return
    }
    drain(source, incoming, this.bounds)
  }

  /**
   * The app cancelled the body stream: nothing more is fed to it. The rest
   * waits for the end of the response (see release), unless it is all in
   * memory already or the response is done: then it is let go now.
   */
  private cancel (): void {
    this.detachReader?.()
    const incoming = this.incoming
    if (this.released || arrived(incoming)) this.source.resume()
    else this.source.pause()
  }

  /**
   * The whole body, read straight from the Node stream without a web stream
   * (what text() and json() need), with the same limit and abort handling:
   * the bytes themselves when they are all here already, else a promise.
   */
  read (): Buffer | Promise<Buffer> {
    const complete = this.takeComplete()
    if (complete !== undefined) {
      if (complete.length <= this.limit) return (this.bytes = complete)
      this.exceeded = true
      return Promise.reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      let length = 0
      const reading = this.attach({
        chunk: (chunk) => { chunks.push(chunk); length += chunk.length },
        end: () => resolve(this.bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)),
        fail: reject
      })
      if (reading) this.source.resume()
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
    this.touched = true
    const data = source.read() as Buffer | null
    this.ended = true
    return data ?? Buffer.alloc(0)
  }

  /**
   * The body as a web stream. Nothing is read from the source before the
   * app asks for a chunk (high-water mark 0): a stream that is made but not
   * read (a native Request is given one at once) leaves the body untouched,
   * and a body someone read through c.env.incoming in the meantime reads as
   * used.
   */
  stream (): ReadableStream<Uint8Array> {
    const source = this.source
    let attached = false
    return new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (!attached) {
          attached = true
          source.pause() // before the 'data' listener, so that it does not start the flow
          const reading = this.attach({
            chunk: (chunk) => {
              controller.enqueue(chunk)
              if ((controller.desiredSize ?? 0) <= 0) source.pause()
            },
            end: () => controller.close(),
            fail: (err) => controller.error(err)
          })
          if (!reading) return
        }
        source.resume()
      },
      cancel: () => {
        this.cancel()
      }
    }, { highWaterMark: 0 })
  }

  /**
   * Feeds the source to `sink`, counting bytes against the limit;
   * `detachReader` undoes it. False when the read is already settled: the
   * body had been read by someone else, or let go, or the client left.
   */
  private attach (sink: BodySink): boolean {
    const { source, limit } = this
    // Read through c.env.incoming (or a hook) first: used, as a native
    // Request's body is once read.
    if (!this.touched && source.readableDidRead) {
      sink.fail(bodyUnusable())
      return false
    }
    this.touched = true
    // A source that will emit nothing more: the client went away while the
    // app was busy elsewhere, or the body was let go once the response was
    // done. Listening would leave the read pending forever. A body that had
    // arrived whole before the client left is still handed over.
    if (this.released || source.readableEnded) {
      sink.fail(bodyGone())
      return false
    }
    if (source.destroyed) {
      if (!this.deliverRest(sink)) sink.fail(bodyAborted())
      return false
    }
    const detach = (err?: Error): void => {
      this.detachReader = undefined
      source.off('data', onData)
      source.off('end', onEnd)
      source.off('error', onError)
      source.off('close', onClose)
      if (err !== undefined) sink.fail(err)
    }
    const onData = (chunk: Buffer): void => {
      this.received += chunk.length
      if (this.received > limit) {
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
      if (!this.deliverRest(sink)) sink.fail(markClientBodyError(err, 'aborted'))
    }
    // An aborted upload closes the source without 'end' (and, depending on
    // the Node version, without 'error'): the read must reject, not hang.
    const onClose = (): void => {
      detach()
      if (!this.deliverRest(sink)) sink.fail(bodyAborted())
    }
    this.detachReader = detach
    source.on('data', onData)
    source.on('end', onEnd)
    source.on('error', onError)
    source.on('close', onClose)
    return true
  }

  /**
   * After the client left: hands `sink` what the stream still holds and
   * ends it, when that is the whole rest of the body (every byte had
   * arrived: see bufferedRest); false, having handed nothing, otherwise.
   */
  private deliverRest (sink: BodySink): boolean {
    const rest = bufferedRest(this.source, this.incoming)
    if (rest === undefined) return false
    let total = this.received
    for (const chunk of rest) total += chunk.length
    const declared = this.incoming.headers['content-length']
    if (declared !== undefined && Number(declared) !== total) return false
    if (total > this.limit) {
      this.exceeded = true
      sink.fail(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
      return true
    }
    this.received = total
    for (const chunk of rest) sink.chunk(chunk)
    this.ended = true
    sink.end()
    return true
  }
}

/**
 * Reads and throws away the rest of an HTTP/1 body once the response is
 * done, so the connection can serve the next request: at most
 * `bounds.limit` bytes and for at most `bounds.timeout` ms, after which the
 * connection closes. A client that stalls, or keeps sending, holds it no
 * longer than that.
 */
function drain (source: Readable, incoming: IncomingMessage | Http2ServerRequest, bounds: DrainBounds): void {
  const http2 = isHttp2(incoming)
  let drained = 0
  const stop = (): void => {
    clearTimeout(timer)
    source.off('data', onData)
    source.off('end', stop)
    source.off('error', stop)
    source.off('close', stop)
  }
  const giveUp = (): void => {
    stop()
    // Read no more: the socket stops once Node's buffer for the body is full.
    source.pause()
    if (http2) closeStream(incoming as Http2ServerRequest)
    else closeConnection(incoming as IncomingMessage)
  }
  // Once the whole body has arrived, what is left is in memory only: it
  // ends without holding anything up.
  const onData = (chunk: Buffer): void => {
    drained += chunk.length
    if (drained > bounds.limit && !arrived(incoming)) giveUp()
  }
  const onTimeout = (): void => {
    if (arrived(incoming)) stop()
    else giveUp()
  }
  const timer = setTimeout(onTimeout, bounds.timeout)
  timer.unref()
  source.on('data', onData)
  source.on('end', stop)
  source.on('error', stop)
  source.on('close', stop)
  source.resume()
}

/** The whole body is in memory already (HTTP/1 only: an HTTP/2 stream says so by ending). */
function arrived (incoming: IncomingMessage | Http2ServerRequest): boolean {
  return !isHttp2(incoming) && (incoming as IncomingMessage).complete
}

/**
 * Ends an HTTP/2 request stream whose body will not be read to its end, the
 * response being complete: RST_STREAM with NO_ERROR (RFC 9113 section 8.1).
 * Only once the bounds are spent: a client still sending when that arrives
 * before it has read the response's end (Node's client, for one) waits for
 * its own unsent data and never closes, so a body that keeps coming within
 * the bounds is read to its end instead.
 */
function closeStream (incoming: Http2ServerRequest): void {
  const stream = incoming.stream
  if (!stream.closed && !stream.destroyed) stream.close(http2Constants.NGHTTP2_NO_ERROR)
}

function bodyAborted (): Error {
  return markClientBodyError(Object.assign(new Error('Request body aborted'), { code: 'ECONNRESET' }), 'aborted')
}

function bodyGone (): Error {
  return new Error('Request body already consumed or discarded')
}

/** What a native Request's body gives once it has been read (the lightweight Request's too). */
export function bodyUnusable (): TypeError {
  return new TypeError('Body is unusable: Body has already been read')
}

interface BodySink {
  chunk (chunk: Buffer): void
  end (): void
  fail (err: Error): void
}
