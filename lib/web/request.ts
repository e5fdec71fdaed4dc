import { Buffer } from 'node:buffer'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import { markClientBodyError } from '../errors.js'
import { clientAbortSignal } from './client-abort.js'
import { bodyUnusable, type RequestBody } from '../request/body.js'
import { requestHeaders } from './headers.js'
import { NativeResponse } from './response.js'
import { realStream } from './shared-body.js'

/**
 * The lightweight Request the app receives. Method and URL are plain
 * strings, headers are built on first use, and text()/json()/arrayBuffer()
 * read the body straight from Node's stream. Anything else (body, clone(),
 * formData(), …) builds a native Request on first use ("materializes") and
 * delegates to it. The public constructor always returns a native Request,
 * so `new Request(c.req.raw, init)` behaves exactly as it does natively.
 */
export const NativeRequest: typeof globalThis.Request = globalThis.Request

const kMethod = Symbol('fastify-hono.method')
const kUrl = Symbol('fastify-hono.url')
const kIncoming = Symbol('fastify-hono.incoming')
const kOutgoing = Symbol('fastify-hono.outgoing')
const kBody = Symbol('fastify-hono.body')
const kBodyUsed = Symbol('fastify-hono.bodyUsed')
const kHeaders = Symbol('fastify-hono.headers')
const kSignal = Symbol('fastify-hono.signal')
const kNative = Symbol('fastify-hono.native')
const kPlainPath = Symbol('fastify-hono.plain-path')

type Lightweight = LightweightRequest

export class LightweightRequest {
  // Set by LightweightState, below.
  declare [kMethod]: string
  declare [kUrl]: string
  declare [kIncoming]: IncomingMessage | Http2ServerRequest
  declare [kOutgoing]: ServerResponse | Http2ServerResponse
  declare [kBody]: RequestBody | null
  declare [kBodyUsed]: boolean
  declare [kHeaders]: Headers | undefined
  /** Made on first use: most apps never ask for it. */
  declare [kSignal]: AbortSignal | undefined
  declare [kNative]: globalThis.Request | undefined
  /** The path and query the URL ends with, when the URL is the origin and that path as they are (url.ts, plainUrl); else undefined. */
  declare [kPlainPath]: string | undefined

  constructor (input: RequestInfo | URL, init?: RequestInit) {
    const source = isLightweight(input) ? materialize(input) : input
    // A lightweight response's body must be the real stream for undici.
    const body = init?.body
    if (body !== undefined && body !== null) {
      if (realStream(body) !== body) init = { ...init, body: realStream(body) }
      // A stream body needs `duplex: 'half'`, the only value there is; some
      // callers leave it out (hono/body-limit 4.1–4.4): default it, as
      // @hono/node-server's Request does.
      if ((init as { duplex?: string }).duplex === undefined) init = { ...init, duplex: 'half' } as RequestInit
    }
    // `new Request()` by the app makes a native one: this class only ever
    // gives its prototype to the plugin's own requests (LightweightState).
    return new NativeRequest(source as RequestInfo | URL, init) as unknown as LightweightRequest
  }

  get method (): string { return this[kMethod] }
  get url (): string { return this[kUrl] }
  get signal (): AbortSignal { return signalOf(this) }

  get headers (): Headers {
    const self = this
    const native = self[kNative]
    if (native !== undefined) return native.headers
    return (self[kHeaders] ??= requestHeaders(self[kIncoming].rawHeaders))
  }

  get body (): ReadableStream<Uint8Array> | null {
    const self = this
    // No body (GET, HEAD, TRACE): null, as the native Request would say, without building one.
    if (self[kNative] === undefined && self[kBody] === null) return null
    return materialize(this).body
  }

  get bodyUsed (): boolean {
    const self = this
    return self[kNative] === undefined ? self[kBodyUsed] : self[kNative].bodyUsed
  }

  text (): Promise<string> {
    const native = this[kNative]
    if (native !== undefined) return native.text()
    return consume(this, decode)
  }

  json (): Promise<any> {
    const native = this[kNative]
    if (native !== undefined) return native.json().catch(invalidJson)
    return consume(this, parseJson)
  }

  arrayBuffer (): Promise<ArrayBuffer> {
    const native = this[kNative]
    if (native !== undefined) return native.arrayBuffer()
    return consume(this, toArrayBuffer)
  }

  bytes (): Promise<Uint8Array> {
    return this.arrayBuffer().then((buffer) => new Uint8Array(buffer))
  }

  blob (): Promise<Blob> { return parsedAs(this, 'blob') }
  formData (): Promise<FormData> { return parsedAs(this, 'formData') }
  clone (): globalThis.Request { return materialize(this).clone() }

  static [Symbol.hasInstance] (value: unknown): boolean {
    return value instanceof NativeRequest
  }
}
Object.setPrototypeOf(LightweightRequest.prototype, NativeRequest.prototype)
Object.setPrototypeOf(LightweightRequest, NativeRequest)

// The rarely used fields come from the native Request.
for (const name of ['cache', 'credentials', 'destination', 'duplex', 'integrity', 'keepalive', 'mode', 'redirect', 'referrer', 'referrerPolicy'] as const) {
  Object.defineProperty(LightweightRequest.prototype, name, {
    get (this: LightweightRequest) { return (materialize(this) as unknown as Record<string, unknown>)[name] },
    configurable: true,
    enumerable: true
  })
}

const utf8 = new TextDecoder() // strips a BOM and replaces bad bytes, as Request.text() does

/**
 * A lightweight request's fields, set by a plain constructor function whose
 * prototype is LightweightRequest's: V8 then keeps all of them inside the
 * object (Object.create leaves room for four, and puts the rest in a
 * separate array that grows as they are added), with one map for all.
 */
const LightweightState = function (this: Lightweight, method: string, url: string, incoming: IncomingMessage | Http2ServerRequest, outgoing: ServerResponse | Http2ServerResponse, body: RequestBody | null, plainPath: string | undefined) {
  this[kMethod] = method
  this[kUrl] = url
  this[kIncoming] = incoming
  this[kOutgoing] = outgoing
  this[kBody] = body
  this[kBodyUsed] = false
  this[kHeaders] = undefined
  this[kSignal] = undefined
  this[kNative] = undefined
  this[kPlainPath] = plainPath
} as unknown as new (...args: Parameters<typeof createLightweightRequest>) => Lightweight
LightweightState.prototype = LightweightRequest.prototype

export function createLightweightRequest (
  method: string,
  url: string,
  incoming: IncomingMessage | Http2ServerRequest,
  outgoing: ServerResponse | Http2ServerResponse,
  body: RequestBody | null,
  /** The path and query `url` ends with, when `url` is the origin and that path as they are. */
  plainPath: string | undefined
): globalThis.Request {
  return new LightweightState(method, url, incoming, outgoing, body, plainPath) as unknown as globalThis.Request
}

/**
 * The path part of a request's URL, as Hono's default getPath reads it,
 * without reading the URL: for a lightweight request whose URL is the origin
 * and a plain path (url.ts, isPlainPath: no `#`, nothing the URL parser would
 * rewrite), up to the query, when it has no `%` (which Hono decodes).
 * Undefined for any other request; then the URL is read.
 */
export function plainRequestPath (request: object): string | undefined {
  const path = (request as Partial<Lightweight>)[kPlainPath]
  if (path === undefined) return undefined
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i)
    if (code === 63 /* ? */) return path.slice(0, i)
    if (code === 37 /* % */) return undefined
  }
  return path
}

function signalOf (request: object): AbortSignal {
  const self = request as Lightweight
  return (self[kSignal] ??= clientAbortSignal(self[kIncoming], self[kOutgoing]))
}

function isLightweight (value: unknown): value is Lightweight {
  return typeof value === 'object' && value !== null && kMethod in value
}

/**
 * What `convert` makes of the body's bytes: converted at once when they are
 * all here already (see RequestBody.takeComplete), else once read; rejected
 * when the body was used, is over the limit, or `convert` throws.
 */
function consume<T> (request: object, convert: (bytes: Buffer) => T): Promise<T> {
  const self = request as Lightweight
  const body = self[kBody]
  if (self[kBodyUsed]) return Promise.reject(bodyUnusable())
  // A null body is never used up: a native Request reads it as empty every time.
  if (body !== null) self[kBodyUsed] = true
  const bytes = body === null ? Buffer.alloc(0) : body.read()
  if (!Buffer.isBuffer(bytes)) return bytes.then(convert)
  try {
    return Promise.resolve(convert(bytes))
  } catch (err) {
    return Promise.reject(err)
  }
}

/**
 * blob() and formData(): the bytes read as text() reads them, then parsed by
 * a native Response with the request's Content-Type, whose body algorithms
 * are a Request's own (the MIME type for the Blob, the urlencoded and
 * multipart parsers). No native Request is built, so a method it refuses
 * (TRACE) still reads, and nothing throws synchronously.
 */
function parsedAs (request: LightweightRequest, kind: 'blob' | 'formData'): Promise<any> {
  const native = (request as Lightweight)[kNative]
  if (native !== undefined) return kind === 'formData' ? native.formData().catch(invalidForm) : native.blob()
  const type = request.headers.get('content-type')
  const init = type === null ? undefined : { headers: { 'content-type': type } }
  const parse = (bytes: Buffer): globalThis.Response => new NativeResponse(bytes.length === 0 ? null : bytes as unknown as BodyInit, init)
  return consume(request, parse).then((response): Promise<Blob | FormData> => kind === 'blob' ? response.blob() : response.formData())
}

const decode = (bytes: Buffer): string => utf8.decode(bytes)
const parseJson = (bytes: Buffer): any => JSON.parse(utf8.decode(bytes))
const toArrayBuffer = (bytes: Buffer): ArrayBuffer => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer

// The body read through a materialized (native) request is not kept for
// lib/request/body-errors.ts to recognise parse errors by: they are marked
// here instead.

/** A body the client sent that is not JSON (json() of a materialized request): see fastifyErrorOf. */
function invalidJson (err: unknown): never {
  throw err instanceof SyntaxError ? markClientBodyError(err, 'invalid json') : err
}

/** A form body the client sent malformed (formData() rejects with a TypeError): see fastifyErrorOf. */
function invalidForm (err: unknown): never {
  throw err instanceof TypeError ? markClientBodyError(err, 'invalid form') : err
}

function materialize (request: object): globalThis.Request {
  const self = request as Lightweight
  let native = self[kNative]
  if (native === undefined) {
    const source = self[kBody]
    // Read already: the native one must say so too (an empty body, consumed below).
    const body = self[kBodyUsed]
      ? new ReadableStream<Uint8Array>({ start (controller) { controller.close() } })
      : source === null ? null : source.stream()
    native = new NativeRequest(self[kUrl], {
      method: self[kMethod],
      headers: (request as LightweightRequest).headers,
      body,
      signal: signalOf(self),
      // @ts-expect-error: undici requires `duplex` for a stream body; the DOM types lack it
      duplex: 'half'
    })
    if (self[kBodyUsed] && body !== null) native.arrayBuffer().catch(() => {})
    self[kNative] = native
  }
  return native
}
