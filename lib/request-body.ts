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

  constructor (source: Readable, limit: number) {
    this.source = source
    this.limit = limit
  }

  /**
   * The whole body, read straight from the Node stream without a web stream
   * (what text() and json() need), with the same limit and abort handling.
   */
  read (): Promise<Buffer> {
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
      sink.fail(Object.assign(new Error('Request body aborted'), { code: 'ECONNRESET' }))
    }
    this.detachReader = detach
    source.on('data', onData)
    source.on('end', onEnd)
    source.on('error', onError)
    source.on('close', onClose)
  }
}

interface BodySink {
  chunk (chunk: Buffer): void
  end (): void
  fail (err: Error): void
}
