/**
 * The lightweight Response. A handler's `new Response(body, init)` with a
 * string, Uint8Array or null body keeps `status`, `body` and the headers
 * record it was given, untouched, so the fast writer can send them with one
 * writeHead and one end. Everything that needs a real Response (reading the
 * body, clone(), …) builds one on first use ("materializes") and delegates to
 * it, so those answers are a native Response's own. Other bodies (streams,
 * Blobs, FormData, …), a custom statusText and anything the native
 * constructor would reject or normalize go straight to a native Response.
 */
export const NativeResponse: typeof globalThis.Response = globalThis.Response

/** The body kinds kept as they are. */
export type StoredBody = string | Uint8Array | null

/** The default Content-Type of a string body, the same on every path. */
export const DEFAULT_TEXT_TYPE = 'text/plain; charset=UTF-8'

const kStatus = Symbol('fastify-hono.status')
const kBody = Symbol('fastify-hono.body')
const kHeadersInit = Symbol('fastify-hono.headersInit')
const kHeaders = Symbol('fastify-hono.headers')
const kNative = Symbol('fastify-hono.native')

type HeadersRecord = Record<string, string | readonly string[]>

interface Lightweight {
  [kStatus]: number
  [kBody]: StoredBody
  /** What the handler passed as `init.headers` (a record or an array of pairs), never mutated. */
  [kHeadersInit]: HeadersRecord | Array<[string, string]> | undefined
  /** The Headers object, once someone asked for it (or the handler passed one, copied). */
  [kHeaders]: Headers | undefined
  /** The native Response, once materialized. */
  [kNative]: globalThis.Response | undefined
}

function isStoredBody (body: unknown): body is StoredBody | undefined {
  return body === undefined || body === null || typeof body === 'string' ||
    body instanceof Uint8Array
}

export class LightweightResponse {
  constructor (body?: BodyInit | null, init?: ResponseInit) {
    const status = init?.status
    const headers = init?.headers
    const simple = isStoredBody(body) &&
      (init === undefined || init === null || typeof init === 'object') &&
      (status === undefined || (Number.isInteger(status) && status >= 200 && status <= 599)) &&
      (init?.statusText === undefined || init.statusText === '') &&
      !(body != null && (status === 204 || status === 205 || status === 304))
    if (!simple) {
      // The native constructor validates, normalizes or throws exactly as it should.
      return wrapNative(new NativeResponse(body, init))
    }
    const self = this as unknown as Lightweight
    self[kStatus] = status ?? 200
    self[kBody] = body ?? null
    self[kNative] = undefined
    if (headers instanceof Headers) {
      self[kHeadersInit] = undefined
      self[kHeaders] = withDefaultType(new Headers(headers), self[kBody])
    } else {
      self[kHeadersInit] = headers as HeadersRecord | Array<[string, string]> | undefined
      self[kHeaders] = undefined
    }
  }

  get status (): number { return (this as unknown as Lightweight)[kStatus] }
  get ok (): boolean { const status = this.status; return status >= 200 && status <= 299 }
  get statusText (): string { const native = nativeOf(this); return native === undefined ? '' : native.statusText }
  get type (): ResponseType { const native = nativeOf(this); return native === undefined ? 'default' : native.type }
  get url (): string { const native = nativeOf(this); return native === undefined ? '' : native.url }
  get redirected (): boolean { const native = nativeOf(this); return native === undefined ? false : native.redirected }

  get headers (): Headers {
    const self = this as unknown as Lightweight
    let headers = self[kHeaders]
    if (headers === undefined) {
      headers = withDefaultType(new Headers(self[kHeadersInit] as HeadersInit | undefined), self[kBody])
      self[kHeaders] = headers
    }
    return headers
  }

  get body (): ReadableStream<Uint8Array> | null { return materialize(this).body }
  get bodyUsed (): boolean { const native = nativeOf(this); return native === undefined ? false : native.bodyUsed }
  text (): Promise<string> { return materialize(this).text() }
  json (): Promise<any> { return materialize(this).json() }
  arrayBuffer (): Promise<ArrayBuffer> { return materialize(this).arrayBuffer() }
  blob (): Promise<Blob> { return materialize(this).blob() }
  formData (): Promise<FormData> { return materialize(this).formData() }
  bytes (): Promise<Uint8Array> {
    const native = materialize(this) as globalThis.Response & { bytes?: () => Promise<Uint8Array> }
    if (typeof native.bytes !== 'function') return native.arrayBuffer().then((buffer) => new Uint8Array(buffer))
    return native.bytes()
  }

  clone (): globalThis.Response {
    const native = materialize(this)
    if (native.bodyUsed) return native.clone() // throws the native TypeError
    const copy = wrapNative(native.clone()) as unknown as Lightweight
    copy[kHeaders] = new Headers(this.headers) // the current headers, not those at materialization
    return copy as unknown as globalThis.Response
  }

  static json (data: unknown, init?: ResponseInit): globalThis.Response {
    return wrapNative(NativeResponse.json(data, init))
  }

  static redirect (url: string | URL, status?: number): globalThis.Response {
    return wrapNative(NativeResponse.redirect(url, status))
  }

  static error (): globalThis.Response {
    return wrapNative(NativeResponse.error())
  }

  // Native and lightweight responses alike are `instanceof Response`.
  static [Symbol.hasInstance] (value: unknown): boolean {
    return value instanceof NativeResponse
  }
}
// Inherit from the native prototype: `instanceof` with the native class and
// Object.prototype.toString (`[object Response]`, which Fastify checks) hold.
Object.setPrototypeOf(LightweightResponse.prototype, NativeResponse.prototype)
Object.setPrototypeOf(LightweightResponse, NativeResponse)

/** A lightweight shell around an already native Response: `headers` is the native's own. */
function wrapNative (native: globalThis.Response): globalThis.Response {
  const self = Object.create(LightweightResponse.prototype) as Lightweight
  self[kStatus] = native.status
  self[kBody] = null
  self[kHeadersInit] = undefined
  self[kHeaders] = native.headers
  self[kNative] = native
  return self as unknown as globalThis.Response
}

function withDefaultType (headers: Headers, body: StoredBody): Headers {
  if (typeof body === 'string' && !headers.has('content-type')) headers.set('content-type', DEFAULT_TEXT_TYPE)
  return headers
}

function nativeOf (response: object): globalThis.Response | undefined {
  return (response as Lightweight)[kNative]
}

/**
 * The native Response behind a lightweight one, built on first need with the
 * same status, the stored body and the lightweight's own Headers' entries.
 * From then on `headers` stays the lightweight's object, so a reference
 * taken earlier keeps working.
 */
function materialize (response: object): globalThis.Response {
  const self = response as Lightweight
  let native = self[kNative]
  if (native === undefined) {
    native = new NativeResponse(self[kBody] as BodyInit | null, { status: self[kStatus], headers: (response as LightweightResponse).headers })
    self[kNative] = native
  }
  return native
}

/** What the fast writer needs of an un-materialized lightweight Response, or undefined for any other Response. */
export interface ResponseParts {
  status: number
  body: StoredBody
  /** The handler's own record, when nobody asked for a Headers object. */
  init: HeadersRecord | undefined
  headers: Headers | undefined
}

export function responseParts (response: object): ResponseParts | undefined {
  const self = response as Partial<Lightweight>
  if (self[kStatus] === undefined || self[kNative] !== undefined) return undefined
  const init = self[kHeadersInit]
  // Pairs may repeat a name, which Headers combines: let Headers read them.
  if (Array.isArray(init)) return { status: self[kStatus], body: self[kBody] as StoredBody, init: undefined, headers: (response as LightweightResponse).headers }
  return { status: self[kStatus], body: self[kBody] as StoredBody, init, headers: self[kHeaders] }
}
