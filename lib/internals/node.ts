import { validateHeaderName, type ServerResponse } from 'node:http'
import { Http2ServerResponse } from 'node:http2'
import { findSymbol, slots } from './find-symbol.js'

// Node's ServerResponse internals (lib/_http_outgoing.js), checked on Node
// 20.20, 22.23, 24.22 and 26.12. Each function below falls back to the
// slower public behaviour when a field is missing or has another shape.
interface NodeOutgoing {
  /** null by default; a number makes `_storeHeader` write `Content-Length: N` itself. */
  _contentLength: number | null
  /** false for HEAD, and once writeHead saw 204 or 304. */
  _hasBody: boolean
  /** true once the caller removed Content-Length. */
  _removedContLen: boolean
  /** false for HTTP/1.0 without `TE: chunked`: no chunked framing is possible. */
  useChunkedEncodingByDefault: boolean
  statusMessage: string | undefined
}

/**
 * Whether Node can write `Content-Length` itself when the head goes out
 * (setContentLength), so the caller's header record is passed to writeHead
 * as it is, never copied or mutated: only where Node would otherwise pick
 * the framing on its own (a body is allowed, chunking is possible, nobody
 * set or removed a length). If Node renamed `_contentLength`, it reads
 * undefined, not null: false, and every length is explicit (slower, never
 * wrong). Always false on HTTP/2.
 */
export function nodeWritesLength (raw: object): boolean {
  const out = raw as Partial<NodeOutgoing>
  return out._contentLength === null && out._hasBody === true && out.useChunkedEncodingByDefault === true && out._removedContLen === false
}

/** Has Node write `Content-Length: length` itself (where nodeWritesLength said it can). */
export function setContentLength (raw: ServerResponse, length: number): void {
  (raw as ServerResponse & NodeOutgoing)._contentLength = length
}

/**
 * After writeHead threw: writeHead sets statusMessage before it validates,
 * and a preset length would frame the 500 that follows with the failed
 * body's length, desynchronizing a keep-alive connection.
 */
export function forgetFailedHead (raw: object): void {
  // HTTP/2 has neither (and warns when statusMessage is set).
  if (isHttp2(raw)) return
  const out = raw as Partial<NodeOutgoing>
  if (out._contentLength !== undefined) out._contentLength = null
  out.statusMessage = undefined
}

/**
 * Whether a raw request or response is HTTP/2's (Node's compatibility API,
 * which Fastify's `http2: true` uses): the one test of the HTTP version for
 * the whole plugin. Public fields only.
 */
export function isHttp2 (message: object): boolean {
  return message instanceof Http2ServerResponse || (message as { httpVersionMajor?: unknown }).httpVersionMajor === 2
}

/**
 * Whether the response can be framed with chunks (false for an HTTP/1.0
 * client without `TE: chunked`). Missing field: assumed false, so streams
 * and trailers take reply.send, which frames them itself.
 */
export function canChunk (raw: object): boolean {
  return (raw as Partial<NodeOutgoing>).useChunkedEncodingByDefault === true
}

/**
 * What was set on the raw response with setHeader() (a plugin that bypasses
 * reply.header(), for one): Node keeps those headers under a private symbol
 * described 'kOutHeaders', in a record keyed by lowercase name, null until
 * the first setHeader. Returns that record, or null when nothing was set;
 * undefined when the symbol is not there and something was set (then
 * getHeaderNames() said so, and hasHeader() answers: see rawHasHeader).
 * Reading the record saves a getHeaderNames() call and, for each name
 * asked about, hasHeader()'s lowercasing on every request.
 */
export function rawHeaderRecord (raw: ServerResponse): Readonly<Record<string, unknown>> | null | undefined {
  kOutHeaders ??= findSymbol(raw, 'kOutHeaders')
  if (kOutHeaders === null) return raw.getHeaderNames().length > 0 ? undefined : null
  return (slots(raw)[kOutHeaders] as Record<string, unknown> | null | undefined) ?? null
}

/** Whether a header (lowercase name) was set on the raw response, from rawHeaderRecord's answer. */
export function rawHasHeader (raw: ServerResponse, record: Readonly<Record<string, unknown>> | null | undefined, lowerName: string): boolean {
  if (record === undefined) return raw.hasHeader(lowerName)
  return record !== null && record[lowerName] !== undefined
}

let kOutHeaders: symbol | null | undefined

/**
 * Whether Node's validateHeaderName has accepted this name before (and then
 * remembers it): an app sends the same handful of names on every response,
 * and the check is a regular expression per name. Bounded: past 512 names,
 * the caller checks each time. Node's rule for a name never changes within
 * a process.
 */
export function nodeAcceptsHeaderName (name: string): boolean {
  if (acceptedNames.has(name)) return true
  try {
    validateHeaderName(name)
  } catch {
    return false
  }
  if (acceptedNames.size < MAX_ACCEPTED_NAMES) acceptedNames.add(name)
  return true
}

const acceptedNames = new Set<string>()
const MAX_ACCEPTED_NAMES = 512
