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
    const { source, limit } = this
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      let received = 0
      const detach = (): void => {
        this.detachReader = undefined
        source.off('data', onData)
        source.off('end', onEnd)
        source.off('error', onError)
        source.off('close', onClose)
      }
      this.detachReader = detach
      const onData = (chunk: Buffer): void => {
        received += chunk.length
        if (received > limit) {
          this.exceeded = true
          detach()
          source.pause()
          reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
          return
        }
        chunks.push(chunk)
      }
      const onEnd = (): void => {
        detach()
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received))
      }
      const onError = (err: Error): void => {
        detach()
        reject(err)
      }
      const onClose = (): void => {
        detach()
        reject(Object.assign(new Error('Request body aborted'), { code: 'ECONNRESET' }))
      }
      source.on('data', onData)
      source.on('end', onEnd)
      source.on('error', onError)
      source.on('close', onClose)
      source.resume()
    })
  }

  stream (): ReadableStream<Uint8Array> {
    const { source, limit } = this
    let received = 0
    let settled = false
    const detach = (): void => {
      settled = true
      this.detachReader = undefined
      source.off('data', onData)
      source.off('end', onEnd)
      source.off('error', onError)
      source.off('close', onClose)
    }
    let controller!: ReadableStreamDefaultController<Uint8Array>
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > limit) {
        this.exceeded = true
        detach()
        source.pause()
        controller.error(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
        return
      }
      controller.enqueue(chunk)
      if ((controller.desiredSize ?? 0) <= 0) source.pause()
    }
    const onEnd = (): void => {
      detach()
      controller.close()
    }
    const onError = (err: Error): void => {
      detach()
      controller.error(err)
    }
    // An aborted upload closes the source without 'end' (and, depending on
    // the Node version, without 'error'): the read must reject, not hang.
    const onClose = (): void => {
      if (settled) return
      detach()
      controller.error(Object.assign(new Error('Request body aborted'), { code: 'ECONNRESET' }))
    }

    return new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c
        this.detachReader = detach
        source.pause()
        source.on('data', onData)
        source.on('end', onEnd)
        source.on('error', onError)
        source.on('close', onClose)
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
}
