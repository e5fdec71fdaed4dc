import type { IncomingMessage } from 'node:http'
import type { Http2ServerRequest } from 'node:http2'
import type { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { FST_ERR_HONO_BAD_REQUEST } from '../errors.js'
import { clientAbortSignal } from '../web/client-abort.js'
import { createLightweightRequest, NativeRequest } from '../web/request.js'
import { RequestBody, type DrainBounds } from './body.js'
import { appPath, originAndPath, plainUrl, type Mount } from './url.js'

/**
 * The request's body, or null when it has none: see bodySource. The app
 * reads it through the Request that bridgeRequest builds around it.
 */
export function requestBody (request: FastifyRequest, drain: DrainBounds): RequestBody | null {
  const source = bodySource(request, request.raw.method ?? 'GET')
  return source === null ? null : new RequestBody(source, request.raw, request.routeOptions.bodyLimit ?? Infinity, drain)
}

/**
 * Builds the Request the app sees: the method, an absolute URL (see url.ts),
 * the headers exactly as received, the body as an unconsumed stream, and a
 * signal that aborts when the client goes away before the response finished.
 * Lightweight when the global classes are ours, native otherwise.
 */
export function bridgeRequest (request: FastifyRequest, reply: FastifyReply, mount: Mount, body: RequestBody | null, lightweight: boolean): Request {
  const raw = request.raw
  const method = raw.method ?? 'GET'
  const path = appPath(request.url, mount)
  const plain = plainUrl(request, path)
  const url = plain ?? originAndPath(request, path)
  // With a plain URL, the request keeps the path: the app's view reads Hono's routing path from it (app-view.ts).
  if (lightweight) return createLightweightRequest(method, url, raw, reply.raw, body, plain === undefined ? undefined : path)
  return nativeRequest(url, method, raw, reply, body)
}

/** A native Request, for when the global Request is not ours: apart, so that bridgeRequest stays small enough to inline. */
function nativeRequest (url: string, method: string, raw: IncomingMessage | Http2ServerRequest, reply: FastifyReply, body: RequestBody | null): Request {
  try {
    return new NativeRequest(url, {
      method,
      headers: headersFrom(raw),
      body: body === null ? null : body.stream(),
      signal: clientAbortSignal(raw, reply.raw),
      // @ts-expect-error: undici requires `duplex` for a stream body; the DOM types lack it
      duplex: 'half'
    })
  } catch (err) {
    throw new FST_ERR_HONO_BAD_REQUEST('The request cannot be represented as a fetch Request', { cause: err })
  }
}

/**
 * The stream Fastify's passthrough parser handed over, or the request itself
 * when Fastify ran no parser: it skips parsing when a request has neither
 * Content-Type nor Transfer-Encoding and no Content-Length other than 0
 * (5.12.8), and an HTTP/2 request has no Content-Length as a rule. As in
 * @hono/node-server (2.1.9), every method but GET, HEAD and TRACE has a
 * body, empty if nothing follows the headers; those three have none.
 */
function bodySource (request: FastifyRequest, method: string): Readable | null {
  if (method === 'GET' || method === 'HEAD' || method === 'TRACE') return null
  const body = request.body
  return body !== undefined && body !== null ? body as Readable : request.raw
}

/**
 * The headers as they came in, for a native Request: duplicates kept,
 * HTTP/2 pseudo-headers left out. (A lightweight request reads them lazily:
 * see requestHeaders in headers.ts.)
 */
function headersFrom (incoming: IncomingMessage | Http2ServerRequest): Headers {
  const headers = new Headers()
  const rawHeaders = incoming.rawHeaders
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]
    if (name.charCodeAt(0) === 58 /* : */) continue
    headers.append(name, rawHeaders[i + 1])
  }
  return headers
}
