import { Buffer } from 'node:buffer'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { canChunk } from '../internals/node.js'
import { DEFAULT_TEXT_TYPE, isNullBodyStatus, type ResponseParts } from '../web/response.js'
import { bufferIfComplete } from './complete-body.js'
import { assertWritableHeaders, copyHeadersToReply, isCustomStatusText } from './head.js'

/**
 * Writes the app's Response through `reply.send`: every onSend hook, HTTP/2,
 * trailers and Fastify's own framing apply. Used whenever the fast writer's
 * guards fail. Buffered bodies go out as a Buffer, so Fastify sets their
 * Content-Length (a string would also get a charset appended to JSON types).
 */
export async function writeThroughReply (
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  parts: ResponseParts | undefined,
  /** The body's continuation, when a writer already started reading it. */
  started?: ReadableStream<Uint8Array>
): Promise<FastifyReply> {
  const status = response.status
  const headers = response.headers
  assertWritableHeaders(headers)
  reply.code(status)
  const http2 = request.raw.httpVersionMajor === 2
  copyHeadersToReply(reply, headers, http2)

  let payload: Buffer | ReadableStream<Uint8Array> | undefined
  // Transfer-Encoding or a Trailer announced by the app: no length may be
  // added, so the body goes out as a stream, chunked (HTTP/1) or as data frames.
  // An HTTP/1.0 client cannot take chunks, hence no trailers: Node would throw
  // on the Trailer header, so it is dropped there.
  let framed = headers.has('transfer-encoding') || headers.has('trailer')
  if (!http2 && framed && !canChunk(reply.raw) && !headers.has('transfer-encoding')) {
    reply.removeHeader('trailer')
    framed = false
  }
  if (parts !== undefined) {
    // A lightweight response: its stored body, without building a stream unless framing needs one.
    const stored = parts.body
    if (stored !== null && !isNullBodyStatus(status)) {
      // A kept Headers object has no default type: the one the fast writer adds.
      if (typeof stored === 'string' && !reply.hasHeader('content-type')) reply.header('content-type', DEFAULT_TEXT_TYPE)
      const bytes = typeof stored === 'string' ? Buffer.from(stored) : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
      payload = framed ? streamOf(bytes) : bytes
    } else if (stored === null && parts.headLength !== undefined && request.raw.method === 'HEAD') {
      // Hono answers HEAD with `new Response(null, getResponse)`: the GET's length.
      reply.header('content-length', String(parts.headLength))
    }
  } else {
    if (started !== undefined) {
      payload = started
    } else {
      const body = response.body
      if (body !== null && !isNullBodyStatus(status)) payload = framed ? body : await bufferIfComplete(body)
      else if (body !== null) await body.cancel()
    }
  }

  // A custom reason phrase (Response's statusText) is kept on HTTP/1;
  // HTTP/2 has none.
  const statusText = response.statusText
  const reason = !http2 && isCustomStatusText(status, statusText) ? statusText : ''
  return send(reply, payload, reason)
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

