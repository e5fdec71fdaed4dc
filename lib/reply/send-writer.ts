import { Buffer } from 'node:buffer'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { canChunk } from '../internals/node.js'
import { DEFAULT_TEXT_TYPE, isNullBodyStatus, type ResponseParts } from '../web/response.js'
import { bufferIfComplete, readAvailable, streamOfStarted, type StartedBody } from './complete-body.js'
import { assertWritableHeaders, copyHeadersToReply, isCustomStatusText } from './head.js'

/**
 * Writes the app's Response through `reply.send`: every onSend hook, HTTP/2,
 * trailers and Fastify's own framing apply. Used whenever a guard of the way
 * out fails. Buffered bodies go out as a Buffer, so Fastify sets their
 * Content-Length (a string would also get a charset appended to JSON types).
 *
 * An error answer never carries the failed response's headers (its caching,
 * validators, encoding, cookies, length): a stream that has failed already
 * rejects before any of them reaches the reply, and one that fails before its
 * first chunk takes them back off the reply and the raw response before
 * Fastify's error handler writes the 500. After the first chunk, Fastify
 * destroys the connection.
 */
export async function writeThroughReply (
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  parts: ResponseParts | undefined,
  /** The body, when the way out already started reading it. */
  started?: StartedBody
): Promise<FastifyReply> {
  const status = response.status
  const headers = response.headers
  assertWritableHeaders(headers)
  const http2 = request.raw.httpVersionMajor === 2
  // Transfer-Encoding or a Trailer announced by the app: no length may be
  // added, so the body goes out as a stream, chunked (HTTP/1) or as data frames.
  // An HTTP/1.0 client cannot take chunks, hence no trailers: Node would throw
  // on the Trailer header, so it is dropped there.
  let framed = headers.has('transfer-encoding') || headers.has('trailer')
  const dropTrailer = !http2 && framed && !canChunk(reply.raw) && !headers.has('transfer-encoding')
  if (dropTrailer) framed = false

  let payload: Buffer | ReadableStream<Uint8Array> | undefined
  let headLength: number | undefined
  // What the reply held before the app's headers, to go back to if a stream fails before its first chunk.
  let before: Record<string, unknown> | undefined
  if (parts !== undefined) {
    // A lightweight response: its stored body, without building a stream unless framing needs one.
    const stored = parts.body
    if (stored !== null && !isNullBodyStatus(status)) {
      // A kept Headers object has no default type: the one the fast writer adds.
      if (typeof stored === 'string' && !reply.hasHeader('content-type')) reply.header('content-type', DEFAULT_TEXT_TYPE)
      const bytes = typeof stored === 'string' ? Buffer.from(stored) : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
      payload = framed ? streamOf(bytes) : bytes
    } else if (stored === null && request.raw.method === 'HEAD') {
      // Hono answers HEAD with `new Response(null, getResponse)`: the GET's length.
      headLength = parts.headLength
    }
  } else {
    const body = started ?? response.body
    if (body !== null && !isNullBodyStatus(status)) {
      // What the stream has ready is read before the reply is touched, so an
      // error it already has is Fastify's plain 500.
      const ready = isStarted(body) ? body : framed ? await readAvailable(body) : await bufferIfComplete(body)
      payload = Buffer.isBuffer(ready) ? ready : streamOfStarted(ready, () => takeBackHeaders(reply, headers, before))
    } else if (body !== null) {
      await (isStarted(body) ? body.reader : body).cancel()
    }
  }

  if (payload !== undefined && !Buffer.isBuffer(payload) && parts === undefined) before = reply.getHeaders()
  reply.code(status)
  copyHeadersToReply(reply, headers, http2)
  if (dropTrailer) reply.removeHeader('trailer')
  if (headLength !== undefined) reply.header('content-length', String(headLength))

  // A custom reason phrase (Response's statusText) is kept on HTTP/1;
  // HTTP/2 has none.
  const statusText = response.statusText
  const reason = !http2 && isCustomStatusText(status, statusText) ? statusText : ''
  return send(reply, payload, reason)
}

function isStarted (body: ReadableStream<Uint8Array> | StartedBody): body is StartedBody {
  return (body as Partial<StartedBody>).reader !== undefined && (body as Partial<StartedBody>).chunks !== undefined
}

/**
 * The body failed before its first chunk, and reply.send has not written the
 * head: the app's headers come off the reply and off the raw response (where
 * Fastify's stream pump copied them), what Fastify hooks had set goes back,
 * and so does the standard reason phrase.
 */
function takeBackHeaders (reply: FastifyReply, headers: Headers, before: Record<string, unknown> | undefined): void {
  const raw = reply.raw
  if (raw.headersSent) return
  for (const name of headers.keys()) {
    reply.removeHeader(name)
    raw.removeHeader(name)
    const previous = before?.[name]
    if (previous !== undefined) reply.header(name, previous)
  }
  if (reply.request.raw.httpVersionMajor !== 2) (raw as { statusMessage?: string }).statusMessage = undefined
}

function send (reply: FastifyReply, payload: Buffer | ReadableStream<Uint8Array> | undefined, reason: string): FastifyReply {
  if (reason !== '') reply.raw.statusMessage = reason
  try {
    return reply.send(payload)
  } catch (err) {
    reply.raw.statusMessage = ''
    throw err
  }
}

function streamOf (bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({ start (controller) { controller.enqueue(bytes); controller.close() } })
}
