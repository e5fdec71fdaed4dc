/**
 * Responses, bodies and headers from other fetch implementations: a
 * ponyfill's classes (@whatwg-node/fetch, which graphql-yoga answers with),
 * npm `undici`'s own Response class, or another realm's (node:vm). None of
 * them is `instanceof Response` here. They are read the way any fetch
 * Response can be read: status and statusText as properties, headers by
 * iterating them, the body through getReader() (or, for a Node stream body,
 * async iteration), and turned into a native Response that the way out
 * handles as it handles any other.
 */
import { Buffer } from 'node:buffer'
import { types } from 'node:util'
import { ReadableStream as WebReadableStream } from 'node:stream/web'
import { copyHeaders } from './headers.js'

/** What is read of a Response from another implementation. */
export interface ForeignResponse {
  readonly status: number
  readonly statusText?: unknown
  readonly headers: Iterable<[string, string]> & { getSetCookie?: () => string[] }
  readonly body: object | null | undefined
  readonly bodyUsed?: unknown
}

/**
 * An object shaped like a fetch Response: a numeric status, Headers-like
 * headers (get() and iterable) and a body that is absent or can be read as
 * a stream. Only asked of values that are neither ours nor native.
 */
export function isResponseShaped (value: object): value is ForeignResponse {
  const candidate = value as Record<string, unknown>
  if (typeof candidate.status !== 'number') return false
  const headers = candidate.headers as Record<string | symbol, unknown> | null | undefined
  if (typeof headers !== 'object' || headers === null || typeof headers.get !== 'function' ||
    typeof headers[Symbol.iterator] !== 'function') return false
  const body = candidate.body
  return body === null || body === undefined || isBodyStreamLike(body)
}

/** A ReadableStream of any realm or library, or an async iterable (a Node stream). */
function isBodyStreamLike (body: unknown): body is object {
  if (typeof body !== 'object' || body === null) return false
  const source = body as Record<string | symbol, unknown>
  return typeof source.getReader === 'function' || typeof source[Symbol.asyncIterator] === 'function'
}

/** A body that is a stream, but not this realm's ReadableStream: it needs reading through its own interface. */
export function isForeignStream (body: unknown): body is object {
  return isBodyStreamLike(body) && !(body instanceof WebReadableStream)
}

/**
 * A copy of another implementation's headers as a lightweight Headers, each
 * entry validated as `append` validates it. Set-Cookie values are taken one
 * by one from getSetCookie() where there is one, since an implementation
 * that iterates them combined would merge the cookies into one line.
 */
export function foreignHeaders (source: ForeignResponse['headers']): Headers {
  const headers = copyHeaders()
  const cookies = typeof source.getSetCookie === 'function' ? source.getSetCookie() : undefined
  for (const [name, value] of source) {
    if (cookies !== undefined && String(name).toLowerCase() === 'set-cookie') continue
    headers.append(name, value)
  }
  if (cookies !== undefined) {
    for (const cookie of cookies) headers.append('set-cookie', cookie)
  }
  return headers
}

interface ChunkSource {
  read: () => PromiseLike<{ done?: boolean, value?: unknown }>
  cancel: (reason?: unknown) => unknown
}

/**
 * This realm's ReadableStream over a foreign stream body, read on demand
 * (one chunk per pull, so backpressure reaches the source) through its
 * getReader(), or its async iterator for a Node stream. The source is
 * locked only at the first read, as a native body is. Chunks become
 * Uint8Arrays of this realm (a view over the same memory where possible);
 * a string chunk is sent as UTF-8.
 */
export function foreignStream (body: object): ReadableStream<Uint8Array> {
  let source: ChunkSource | undefined
  return new WebReadableStream<Uint8Array>({
    async pull (controller) {
      source ??= openSource(body)
      const result = await source.read()
      if (result.done === true) controller.close()
      else controller.enqueue(toBytes(result.value))
    },
    async cancel (reason) {
      source ??= openSource(body)
      await source.cancel(reason)
    }
  }, { highWaterMark: 0 }) as unknown as ReadableStream<Uint8Array>
}

function openSource (body: object): ChunkSource {
  const stream = body as {
    getReader?: () => { read: ChunkSource['read'], cancel: (reason?: unknown) => unknown }
    [Symbol.asyncIterator]?: () => AsyncIterator<unknown>
  }
  if (typeof stream.getReader === 'function') {
    const reader = stream.getReader()
    return { read: () => reader.read(), cancel: (reason) => reader.cancel(reason) }
  }
  const iterator = stream[Symbol.asyncIterator]!()
  return {
    read: () => iterator.next(),
    cancel: () => typeof iterator.return === 'function' ? iterator.return() : undefined
  }
}

function toBytes (chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk
  // Another realm's typed arrays and buffers: the same memory, seen from here.
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  if (types.isAnyArrayBuffer(chunk)) return new Uint8Array(chunk)
  if (typeof chunk === 'string') return Buffer.from(chunk)
  throw new TypeError(`A response body chunk must be bytes, got ${chunk === null ? 'null' : typeof chunk}`)
}
