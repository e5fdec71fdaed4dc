import type { IncomingMessage } from 'node:http'
import type { Http2ServerRequest } from 'node:http2'
import type { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { badRequest } from './errors.js'
import { RequestBody } from './request-body.js'
import { requestUrl, type Mount } from './url.js'

/** What the route keeps of a bridged request while the app runs. */
export interface BridgedRequest {
  request: Request
  body: RequestBody | null
}

/**
 * Builds the Request the app sees: the method, an absolute URL (see url.ts),
 * the headers exactly as received, the body as an unconsumed stream, and a
 * signal that aborts when the client goes away before the response finished.
 */
export function bridgeRequest (request: FastifyRequest, reply: FastifyReply, mount: Mount): BridgedRequest {
  const url = requestUrl(request, mount)
  const method = request.raw.method ?? 'GET'
  const source = bodySource(request, method)
  const body = source === null ? null : new RequestBody(source, request.routeOptions.bodyLimit ?? Infinity)
  const headers = requestHeaders(request.raw)
  const signal = abortSignalFor(reply)
  let bridged: Request
  try {
    bridged = new Request(url, {
      method,
      headers,
      body: body === null ? null : body.stream(),
      signal,
      // @ts-expect-error: `duplex` is required by undici for a stream body but missing from the DOM types
      duplex: 'half'
    })
  } catch (err) {
    throw badRequest('The request cannot be represented as a fetch Request', err)
  }
  return { request: bridged, body }
}

/**
 * The stream Fastify's passthrough parser handed over. Fastify skips parsing
 * when a request has neither Content-Type nor Content-Length nor
 * Transfer-Encoding (5.12.8), which on HTTP/1 means no body; an HTTP/2 request
 * has no Content-Length as a rule, so there the stream itself says whether a
 * body follows the headers.
 */
function bodySource (request: FastifyRequest, method: string): Readable | null {
  if (request.body !== undefined && request.body !== null) return request.body as Readable
  if (method === 'GET' || method === 'HEAD') return null
  const raw = request.raw
  if (raw.httpVersionMajor !== 2 || raw.readableEnded) return null
  return (raw as unknown as Http2ServerRequest).stream.endAfterHeaders ? null : raw
}

/** The headers as they came in: duplicates kept, HTTP/2 pseudo-headers left out. */
function requestHeaders (raw: IncomingMessage | Http2ServerRequest): Headers {
  const headers = new Headers()
  const rawHeaders = raw.rawHeaders
  try {
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]
      if (name.charCodeAt(0) === 58 /* : */) continue
      headers.append(name, rawHeaders[i + 1])
    }
  } catch (err) {
    throw badRequest('Invalid request header', err)
  }
  return headers
}

/**
 * Aborts when the response closes before it finished (the client went away).
 * Fastify's own `request.signal` is not used: in 5.12.x it aborts shortly
 * after a POST body has been read, while the handler still runs.
 */
function abortSignalFor (reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  const raw = reply.raw
  raw.once('close', () => {
    if (!raw.writableFinished) controller.abort()
  })
  return controller.signal
}
