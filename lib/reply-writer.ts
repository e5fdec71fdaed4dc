import { STATUS_CODES } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { bufferIfComplete } from './response-body.js'
import { assertWritableHeaders, copyHeadersToReply } from './response-headers.js'

/**
 * Writes the app's Response. This is the fallback writer, `reply.send`: every
 * onSend hook, HTTP/2, trailers and Fastify's own framing apply. A faster
 * writer slots in before it (see the fast path), and hands over to it
 * whenever one of its guards fails.
 */
export async function sendThroughReply (request: FastifyRequest, reply: FastifyReply, response: Response): Promise<FastifyReply> {
  const status = response.status
  const headers = response.headers
  assertWritableHeaders(headers)
  reply.code(status)
  const http2 = request.raw.httpVersionMajor === 2
  copyHeadersToReply(reply, headers, http2)

  let payload: Buffer | ReadableStream<Uint8Array> | undefined
  const body = response.body
  if (body !== null && !hasNoBody(status)) {
    // Transfer-Encoding or a Trailer announced by the app: no length may be
    // added, so the body goes out as a stream, chunked (HTTP/1) or as data frames.
    const framed = headers.has('transfer-encoding') || headers.has('trailer')
    payload = framed ? body : await bufferIfComplete(body)
  } else if (body !== null) {
    await body.cancel()
  }

  // A custom reason phrase (Response's statusText) is kept on HTTP/1;
  // HTTP/2 has none.
  const statusText = response.statusText
  if (!http2 && statusText !== '' && statusText !== STATUS_CODES[status]) reply.raw.statusMessage = statusText

  try {
    return reply.send(payload)
  } catch (err) {
    reply.raw.statusMessage = ''
    throw err
  }
}

/** 1xx, 204, 205 and 304 carry no body. */
export function hasNoBody (status: number): boolean {
  return status < 200 || status === 204 || status === 205 || status === 304
}
