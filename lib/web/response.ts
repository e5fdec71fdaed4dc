/**
 * The lightweight Response. A handler's `new Response(body, init)` with a
 * string, Uint8Array or null body keeps `status`, `body` and the headers
 * record it was given, untouched, so the fast writer can send them with one
 * writeHead and one end. Everything that needs a real Response (reading the
 * body, clone(), …) builds one on first use ("materializes") and delegates to
 * it, so those answers are a native Response's own. Other bodies (streams,
 * Blobs, FormData, …), a custom statusText and anything the native
 * constructor would reject or normalize go straight to a native Response.
 *
 * A Headers object given as `init.headers` in a plain init object is kept
 * by reference, not copied, for stored and stream bodies: headers a Hono
 * handler or middleware sets after building the body (`c.header()` after
 * `c.body()`) still go out. docs/web-classes.md lists this and the other
 * differences from the native class.
 */
import { Buffer } from 'node:buffer'
import { types } from 'node:util'
import { ReadableStream as WebReadableStream } from 'node:stream/web'
import { responseBodyConsumed } from '../internals/fastify.js'
import { foreignHeaders, foreignStream, isForeignStream, isResponseShaped, type ForeignResponse } from './foreign.js'
import { copyHeaders, defaultContentType, isLightweightHeaders, NativeHeaders } from './headers.js'
import { createSharedBody, groupOfUsableStream, isUsable, isUsed, lazyStreamOf, MAX_MEMBERS, markSent, realStream, streamOf, type SharedBody, type StoredBody } from './shared-body.js'

export const NativeResponse: typeof globalThis.Response = globalThis.Response

/** The default Content-Type of a string body, the same on every path. */
const DEFAULT_TEXT_TYPE = 'text/plain; charset=UTF-8'

/** The Content-Type a body without one goes out with, on every way out: ours for text, Fastify's for bytes. */
export function defaultTypeOf (body: string | Uint8Array): string {
  return typeof body === 'string' ? DEFAULT_TEXT_TYPE : 'application/octet-stream'
}

/** Fetch's null body statuses (1xx, 204, 205, 304): a response with one carries no body. */
export function isNullBodyStatus (status: number): boolean {
  return status < 200 || status === 204 || status === 205 || status === 304
}

const kStatus = Symbol('fastify-hono.status')
const kBody = Symbol('fastify-hono.body')
const kHeadersInit = Symbol('fastify-hono.headersInit')
const kHeaders = Symbol('fastify-hono.headers')
const kNative = Symbol('fastify-hono.native')
const kGroup = Symbol('fastify-hono.group')
const kHeadLength = Symbol('fastify-hono.headLength')

type HeadersRecord = Record<string, string | readonly string[]>

type Lightweight = LightweightResponse

function isStoredBody (body: unknown): body is StoredBody | undefined {
  return body === undefined || body === null || typeof body === 'string' ||
    body instanceof Uint8Array
}

export class LightweightResponse {
  declare [kStatus]: number
  declare [kBody]: StoredBody
  /** What the handler passed as `init.headers` (a record or an array of pairs), never mutated. */
  declare [kHeadersInit]: HeadersRecord | Array<[string, string]> | undefined
  /** The Headers object: the one the handler passed (kept, not copied), or a copy of the init made when someone asked for it. */
  declare [kHeaders]: Headers | undefined
  /** The native Response, once materialized. */
  declare [kNative]: globalThis.Response | undefined
  /** The body shared with copies, once `.body` was asked for or a copy was made. */
  declare [kGroup]: SharedBody | undefined
  /** For `new Response(null, getResponse)` (Hono's HEAD): the length the GET body has. */
  declare [kHeadLength]: number | undefined

  constructor (body?: BodyInit | null, init?: ResponseInit) {
    const status = init?.status
    const headers = init?.headers
    const simpleInit = (init === undefined || init === null || typeof init === 'object') &&
      (status === undefined || (Number.isInteger(status) && status >= 200 && status <= 599)) &&
      (init?.statusText === undefined || init.statusText === '') &&
      (status === undefined || !isNullBodyStatus(status))
    // A copy of a finished response (`new Response(res.body, res)`): share its
    // stored body rather than read the stream.
    const group = simpleInit ? groupOfUsableStream(body) : undefined
    if (group !== undefined && group.members < MAX_MEMBERS) {
      group.members++
      const self = this
      self[kStatus] = status ?? 200
      self[kBody] = group.body
      self[kNative] = undefined
      self[kGroup] = group
      self[kHeadLength] = undefined
      self[kHeadersInit] = undefined
      self[kHeaders] = isKeptHeaders(headers, init) ? headers as Headers : copyHeaders(headers)
      return
    }
    const simple = isStoredBody(body) && (simpleInit || (body == null && isNullBodyInit(init)))
    if (!simple) {
      // The native constructor validates, normalizes or throws exactly as it should.
      const nativeBody = isForeignStream(body) ? foreignStream(body) : realStream(body)
      const native = new NativeResponse(nativeBody, init)
      // A stream body adds no Content-Type: the handler's Headers object is all there is to keep.
      // The constructor answers with the native Response itself.
      return wrapNative(native, nativeBody instanceof WebReadableStream && isKeptHeaders(headers, init) ? headers as Headers : undefined) as unknown as LightweightResponse
    }
    const self = this
    self[kStatus] = status ?? 200
    self[kBody] = body ?? null
    self[kNative] = undefined
    self[kGroup] = undefined
    self[kHeadLength] = body == null ? lengthOfStored(init) : undefined
    if (isHeadersObject(headers)) {
      self[kHeadersInit] = undefined
      // Kept as given, without the default Content-Type, which the writers add on the wire.
      self[kHeaders] = isPlainInit(init) ? headers as Headers : withFetchDefaultType(copyHeaders(headers), self[kBody])
    } else {
      self[kHeadersInit] = headers as HeadersRecord | Array<[string, string]> | undefined
      self[kHeaders] = undefined
    }
  }

  get status (): number { return this[kStatus] }
  get ok (): boolean { const status = this.status; return status >= 200 && status <= 299 }
  get statusText (): string { const native = nativeOf(this); return native === undefined ? '' : native.statusText }
  get type (): ResponseType { const native = nativeOf(this); return native === undefined ? 'default' : native.type }
  get url (): string { const native = nativeOf(this); return native === undefined ? '' : native.url }
  get redirected (): boolean { const native = nativeOf(this); return native === undefined ? false : native.redirected }

  get headers (): Headers {
    const self = this
    let headers = self[kHeaders]
    if (headers === undefined) {
      headers = withFetchDefaultType(copyHeaders(self[kHeadersInit] as HeadersInit | undefined), self[kBody])
      self[kHeaders] = headers
    }
    return headers
  }

  get body (): ReadableStream<Uint8Array> | null {
    const self = this
    const native = self[kNative]
    if (native !== undefined) return native.body
    const stored = self[kBody]
    if (stored === null) return null
    // A string body: a real stream, made lazily, that copies recognize.
    if (typeof stored === 'string') return lazyStreamOf(self[kGroup] ??= createSharedBody(stored))
    return materialize(this).body
  }

  get bodyUsed (): boolean {
    const self = this
    const native = self[kNative]
    if (native !== undefined) return native.bodyUsed
    const group = self[kGroup]
    return group !== undefined && isUsed(group)
  }

  // Each answers as a native Response in the same state would: a promise,
  // rejected when the body is unusable, never a synchronous throw.
  text (): Promise<string> { return readBody(this, 'text') }
  json (): Promise<any> { return readBody(this, 'json') }
  arrayBuffer (): Promise<ArrayBuffer> { return readBody(this, 'arrayBuffer') }
  blob (): Promise<Blob> { return readBody(this, 'blob') }
  formData (): Promise<FormData> { return readBody(this, 'formData') }
  bytes (): Promise<Uint8Array> { return readBody(this, 'bytes') }

  clone (): globalThis.Response {
    if (!isLightweight(this)) return NativeResponse.prototype.clone.call(this)
    // An unusable body (read, locked or sent): the native clone() throws its TypeError.
    const native = materialize(this).clone()
    // The current headers, not those at materialization; a copy, so the default type is added as natively.
    return wrapNative(native, withFetchDefaultType(copyHeaders(this.headers), this[kBody]))
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

  /**
   * The copy hook proposed to Hono upstream: a copy with the same
   * stored body, status and its own copy of the headers, or undefined to
   * decline, in which case Hono copies through `.body`.
   */
  static [Symbol.for('hono.response.copyHeaders')] (response: unknown): globalThis.Response | undefined {
    if (typeof response !== 'object' || response === null || types.isProxy(response)) return undefined
    if (Object.getPrototypeOf(response) !== LightweightResponse.prototype) return undefined // subclasses, natives
    const self = response as Lightweight
    const stored = self[kBody]
    if (self[kNative] !== undefined || (stored !== null && typeof stored !== 'string')) return undefined // materialized, bytes
    const status = self[kStatus]
    if (status < 200 || status > 599 || (stored !== null && isNullBodyStatus(status))) return undefined
    const group = self[kGroup] ??= createSharedBody(stored)
    if (group.lazy !== undefined || group.stream !== undefined || group.sent || group.members >= MAX_MEMBERS) return undefined // observed, sent, full
    group.members++
    const copy = Object.create(LightweightResponse.prototype) as Lightweight
    copy[kStatus] = status
    copy[kBody] = stored
    copy[kNative] = undefined
    copy[kGroup] = group
    copy[kHeadLength] = self[kHeadLength]
    copy[kHeadersInit] = undefined
    copy[kHeaders] = copyHeaders((response as LightweightResponse).headers)
    return copy as unknown as globalThis.Response
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

/**
 * A lightweight shell around an already native Response: `headers` is the
 * native's own, or the given object, which has the same entries (a Headers
 * object the handler passed, kept, or a lightweight copy).
 */
function wrapNative (native: globalThis.Response, headers?: Headers): globalThis.Response {
  const self = Object.create(LightweightResponse.prototype) as Lightweight
  self[kStatus] = native.status
  self[kBody] = null
  self[kHeadersInit] = undefined
  self[kHeaders] = headers ?? native.headers
  self[kNative] = native
  self[kGroup] = undefined
  self[kHeadLength] = undefined
  return self as unknown as globalThis.Response
}

/**
 * A Headers object, lightweight or native, rather than a record or pairs:
 * this runs for every response. Not with Object.getPrototypeOf, which
 * optimized code calls into V8's runtime for wherever the objects it sees
 * have more than one prototype (a record here, a Headers there); an
 * instanceof of the native class (which has no Symbol.hasInstance of its
 * own) walks the prototype chain inline.
 */
function isHeadersObject (value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  return isLightweightHeaders(value) || value instanceof NativeHeaders
}

const isPrototypeOf = Object.prototype.isPrototypeOf

/**
 * An init object literal, rather than a Response (ours, native or foreign)
 * passed as init, whose headers a copy must not share. One of ours (Hono's
 * copies of c.res pass the old response as init) is recognized by a walk of
 * its prototype chain, without the runtime call Object.getPrototypeOf makes
 * (see isHeadersObject).
 */
function isPlainInit (init: unknown): boolean {
  if (typeof init !== 'object' || init === null) return false
  if (isPrototypeOf.call(LightweightResponse.prototype, init)) return false
  const proto = Object.getPrototypeOf(init)
  return proto === Object.prototype || proto === null
}

/** A Headers object given in a plain init: kept by reference, as @hono/node-server's Response keeps it. */
function isKeptHeaders (headers: unknown, init: unknown): boolean {
  return isHeadersObject(headers) && isPlainInit(init)
}

function isNullBodyInit (init: ResponseInit | undefined): boolean {
  const status = init?.status
  return status !== undefined && status >= 200 && isNullBodyStatus(status) && (init?.statusText === undefined || init.statusText === '')
}

/** The byte length of an un-materialized lightweight Response used as `init`, or undefined. */
function lengthOfStored (init: unknown): number | undefined {
  if (typeof init !== 'object' || init === null) return undefined
  const source = init as Partial<Lightweight>
  if (source[kStatus] === undefined || source[kNative] !== undefined) return undefined
  const stored = source[kBody]
  if (stored === null || stored === undefined) return undefined
  return typeof stored === 'string' ? Buffer.byteLength(stored) : stored.byteLength
}

/** What the Fetch constructor adds to a string body's headers (its text type; nothing for bytes). `headers` is a fresh lightweight copy. */
function withFetchDefaultType (headers: Headers, body: StoredBody): Headers {
  return typeof body === 'string' ? defaultContentType(headers, DEFAULT_TEXT_TYPE) : headers
}

function nativeOf (response: object): globalThis.Response | undefined {
  return (response as Lightweight)[kNative]
}

function isLightweight (value: object): boolean {
  return (value as Partial<Lightweight>)[kStatus] !== undefined
}

type BodyMethod = 'text' | 'json' | 'arrayBuffer' | 'blob' | 'formData' | 'bytes'
type WithBytes = globalThis.Response & { bytes?: () => Promise<Uint8Array> }

/** A body method's answer: the native Response's, as a promise whatever happens. */
function readBody (response: object, method: BodyMethod): Promise<any> {
  let native: WithBytes
  if (isLightweight(response)) {
    try {
      native = materialize(response)
    } catch (err) {
      return Promise.reject(err)
    }
  } else {
    // Called on a native Response (or anything else) through our prototype: the native method decides.
    native = response as WithBytes
  }
  const nativeMethod = (NativeResponse.prototype as WithBytes)[method]
  // Node 20 before 20.16 has no bytes(): the same bytes, through arrayBuffer().
  if (nativeMethod === undefined) return NativeResponse.prototype.arrayBuffer.call(native).then((buffer) => new Uint8Array(buffer))
  return (nativeMethod as () => Promise<any>).call(native)
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
    const group = self[kGroup]
    const stored = self[kBody]
    if (group !== undefined && stored !== null && !isUsable(group)) return unusable(group)
    let headers = (response as LightweightResponse).headers
    if (group === undefined || stored === null) {
      native = new NativeResponse(stored as BodyInit | null, { status: self[kStatus], headers })
    } else {
      // A shared body materializes over the group's one stream, so reading any member consumes it for all.
      // A stream implies no type: a string's default, which a kept Headers object lacks, is given as the constructor would.
      if (typeof stored === 'string' && !headers.has('content-type')) headers = withFetchDefaultType(copyHeaders(headers), stored)
      native = new NativeResponse(streamOf(group), { status: self[kStatus], headers })
    }
    self[kNative] = native
  }
  return native
}

/**
 * A stand-in for a member whose shared body can no longer make a Response
 * (the native constructor throws on a read or locked stream): a native
 * Response whose body is in the same state, read or locked, so its methods
 * reject, and clone() throws, with the native errors. Not kept: a locked
 * stream may be released.
 */
function unusable (group: SharedBody): globalThis.Response {
  const standIn = new NativeResponse(new WebReadableStream() as unknown as ReadableStream<Uint8Array>)
  if (isUsed(group)) standIn.body!.cancel().catch(() => {})
  else standIn.body!.getReader()
  return standIn
}

/** What the fast writer needs of an un-materialized lightweight Response, or undefined for any other Response. */
export interface ResponseParts {
  status: number
  body: StoredBody
  /** The handler's own record, when nobody asked for a Headers object. */
  init: HeadersRecord | undefined
  headers: Headers | undefined
  /** For a HEAD answer made from a GET response: the GET body's length. */
  headLength: number | undefined
  /** The app wrote the raw response itself and returned the marker saying so (ALREADY_SENT). */
  appWrote: boolean
}

/**
 * The app's answer as a Response the way out can send, or undefined if it
 * is none. This module's own responses (most of them) are recognized
 * without a call to Symbol.hasInstance, which this runs on every request;
 * then native ones. A Response from another implementation or realm
 * (a ponyfill's, npm undici's, a vm context's), which is neither, is read
 * through its public interface into a native Response (see foreign.ts).
 */
export function asResponse (value: unknown): globalThis.Response | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if ((value as Partial<Lightweight>)[kStatus] !== undefined || value instanceof NativeResponse) return value as globalThis.Response
  return isResponseShaped(value) ? adoptForeign(value) : undefined
}

/**
 * A native Response with a foreign one's status, statusText, headers (a
 * snapshot: the app is done with it) and body stream. A body the foreign
 * response reports as used leaves this one used too, so the way out refuses
 * it as it refuses any consumed body.
 */
function adoptForeign (foreign: ForeignResponse): globalThis.Response {
  const status = foreign.status
  const used = foreign.bodyUsed === true
  const source = isNullBodyStatus(status) ? null : foreign.body ?? null
  const body = source === null
    ? null
    : used
      ? new WebReadableStream() as unknown as ReadableStream<Uint8Array>
      : source instanceof WebReadableStream ? source as unknown as ReadableStream<Uint8Array> : foreignStream(source)
  const headers = foreignHeaders(foreign.headers)
  const statusText = typeof foreign.statusText === 'string' ? foreign.statusText : ''
  const native = new NativeResponse(body, { status, statusText, headers })
  if (used && native.body !== null) native.body.cancel().catch(() => {})
  return wrapNative(native, headers)
}

export function responseParts (response: object): ResponseParts | undefined {
  const self = response as Partial<Lightweight>
  if (self[kStatus] === undefined || self[kNative] !== undefined) return undefined
  const init = self[kHeadersInit]
  const body = self[kBody] as StoredBody
  // Pairs may repeat a name, which Headers combines: let Headers read them.
  const parts: ResponseParts = Array.isArray(init)
    ? { status: self[kStatus], body, init: undefined, headers: (response as LightweightResponse).headers, headLength: self[kHeadLength], appWrote: false }
    : { status: self[kStatus], body, init, headers: self[kHeaders], headLength: self[kHeadLength], appWrote: false }
  if (body === null) parts.appWrote = isAlreadySentMarker(parts)
  // A body shared with copies (or this same response sent before) goes out once.
  else if (!claimBody(self as Lightweight)) throw responseBodyConsumed()
  return parts
}

/**
 * Claims the stored body for sending: false if it was read or sent already
 * (through any member of its group), true otherwise, and from then on every
 * member reads as consumed.
 */
function claimBody (self: Lightweight): boolean {
  const group = self[kGroup]
  if (group === undefined) {
    // Sole owner: a later read or send of this same object must fail too.
    self[kGroup] = createSharedBody(self[kBody])
    markSent(self[kGroup])
    return true
  }
  if (isUsed(group) || (group.stream !== undefined && group.stream.locked)) return false
  markSent(group)
  return true
}

/**
 * The name of the header that marks @hono/node-server's RESPONSE_ALREADY_SENT
 * (`@hono/node-server/utils/response`): a bodiless Response an app returns
 * after writing the raw response itself.
 */
export const ALREADY_SENT = 'x-hono-already-sent'

/** Whether a bodiless lightweight response is that marker, without building its Headers. */
function isAlreadySentMarker (parts: ResponseParts): boolean {
  if (parts.headers !== undefined) return parts.headers.has(ALREADY_SENT)
  const init = parts.init
  if (init === undefined || init === null) return false
  for (const name in init) {
    if (name.length === ALREADY_SENT.length && name.toLowerCase() === ALREADY_SENT) return true
  }
  return false
}
