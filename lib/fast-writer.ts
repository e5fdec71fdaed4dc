// Imported, not the global: Node 20–26 define the global Buffer as a getter,
// which every use calls (about 15 ns; Buffer.byteLength runs on every request).
import { Buffer } from 'node:buffer'
import { ServerResponse, type OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply } from 'fastify'
import { headerList, isLightweightHeaders } from './headers.js'
import { combineVary } from './response-headers.js'
import { DEFAULT_TEXT_TYPE, type ResponseParts } from './response.js'
import { findSymbol } from './private-symbols.js'
import { replyHeaders } from './route-context.js'

// Node's ServerResponse internals read and preset here (lib/_http_outgoing.js,
// checked on Node 20.20, 22.23, 24.22 and 26.12; see shared NOTES.md):
// with `_contentLength` a number and no Content-Length/Transfer-Encoding
// header, `_storeHeader` writes `Content-Length: N` itself, so the handler's
// header record is sent as it is, never copied or mutated.
interface NodeOutgoing {
  _contentLength: number | null
  _hasBody: boolean
  _removedContLen: boolean
  useChunkedEncodingByDefault: boolean
  statusMessage: string | undefined
}

/**
 * What writeHead is given: an object, or a flat list of names and values
 * (Node 20–26 accept both, and only read them; repeated names, such as
 * Set-Cookie, each become a line).
 */
export type HeadLines = OutgoingHttpHeaders | readonly string[]

// Shared, frozen: writeHead only reads the object it is given.
const TEXT_HEADERS: OutgoingHttpHeaders = Object.freeze({ 'content-type': DEFAULT_TEXT_TYPE })
const BYTES_HEADERS: OutgoingHttpHeaders = Object.freeze({ 'content-type': 'application/octet-stream' })
const NO_HEADERS: OutgoingHttpHeaders = Object.freeze({})

/**
 * Writes an un-materialized lightweight Response straight to the raw HTTP/1
 * response: one writeHead, one end. Returns false, having written nothing,
 * when a guard fails and reply.send must do it. Throws (with Node's state
 * reset) when writeHead rejects the status or a header, so that Fastify's
 * error handler answers 500 on a clean slate.
 */
export function writeFast (reply: FastifyReply, parts: ResponseParts, method: string): boolean {
  const raw = reply.raw
  // HTTP/2 has none of these fields and forbids some headers: reply.send copes.
  if (!(raw instanceof ServerResponse) || raw.headersSent) return false
  const headers = outgoingHeaders(reply, parts)
  if (headers === undefined) return false

  const { status, body } = parts
  const length = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
  const out = raw as unknown as NodeOutgoing
  const noBody = status === 204 || status === 205 || status === 304
  let toWrite = headers
  if (status === 204 || status === 304) {
    // Node marks these bodiless in writeHead and sends no length.
  } else if (out._contentLength === null && out._hasBody && out.useChunkedEncodingByDefault && !out._removedContLen) {
    out._contentLength = noBody ? 0 : length
  } else if (method === 'HEAD' && body === null) {
    // Hono answers HEAD with `new Response(null, getResponse)`: announce the GET's length.
    if (parts.headLength !== undefined) toWrite = withLength(headers, parts.headLength)
  } else {
    // HTTP/1.0 (no chunking) or a HEAD answer with a body: the length must be explicit.
    toWrite = withLength(headers, noBody ? 0 : length)
  }

  try {
    raw.writeHead(status, toWrite as OutgoingHttpHeaders)
  } catch (err) {
    // writeHead sets statusMessage before validating; a preset length would
    // frame the 500 that follows with this body's length.
    out._contentLength = null
    out.statusMessage = undefined
    throw err
  }
  reply.hijack()
  if (noBody || body === null) raw.end()
  else raw.end(body)
  return true
}

/**
 * The header object to hand to writeHead, or undefined when a guard fails:
 * the app set Content-Length, Transfer-Encoding or a Trailer (the framing is
 * then the app's business, which reply.send handles), a header value is not a
 * plain string, a Content-Disposition is not ASCII (with a preset length,
 * Node re-encodes it as latin1 and throws), or such a header was already set
 * on the raw response. Headers that Fastify hooks set with reply.header() are
 * merged in a new object; the app's record is passed as it is when there are none.
 */
export function outgoingHeaders (reply: FastifyReply, parts: ResponseParts, streaming = false): HeadLines | undefined {
  const raw = reply.raw
  const rawHasHeaders = hasRawHeaders(raw)
  if (rawHasHeaders && (raw.hasHeader('content-length') || raw.hasHeader('transfer-encoding') || raw.hasHeader('trailer'))) return undefined
  const fromFastify = replyHeaders(reply) // read only: copied before any change
  let fastifyHasHeaders = false
  for (const _ in fromFastify) { fastifyHasHeaders = true; break }
  const { init, headers, body } = parts

  let record: Record<string, string | string[]>
  if (headers !== undefined) {
    if (isLightweightHeaders(headers)) {
      // The list as kept: validated, lowercase, no sorting needed on the wire.
      const list = headerList(headers)
      if (!fastifyHasHeaders) {
        // Nothing to merge: writeHead takes the flat list as it is, and only reads it.
        let hasType = false
        let hasCookies = false
        for (let i = 0; i < list.length; i += 2) {
          const name = list[i]
          if (name === 'content-type') hasType = true
          else if (name === 'set-cookie') hasCookies = true
          else if (!allowedOnFastPath(name, list[i + 1], streaming)) return undefined
        }
        // With headers already set on the raw response, Node merges a list
        // name by name, keeping one Set-Cookie (Node 20.20): an object keeps them all.
        if ((hasType || body === null) && (!hasCookies || !rawHasHeaders)) return list
      }
      record = fastifyHasHeaders ? { ...fromFastify } : {}
      for (let i = 0; i < list.length; i += 2) {
        if (!addHeader(record, list[i], list[i + 1], streaming)) return undefined
      }
    } else {
      record = fastifyHasHeaders ? { ...fromFastify } : {}
      for (const [name, value] of headers) {
        if (!addHeader(record, name, value, streaming)) return undefined
      }
    }
  } else if (init !== undefined && init !== null) {
    let hasType = false
    for (const name in init) {
      const value = init[name]
      if (typeof value !== 'string') return undefined
      const lower = name.toLowerCase()
      if (lower === 'content-type') hasType = true
      else if (!allowedOnFastPath(lower, value)) return undefined
    }
    // The common case: the handler's record goes out as it is.
    if (!fastifyHasHeaders && (hasType || body === null)) return init as OutgoingHttpHeaders
    record = fastifyHasHeaders ? { ...fromFastify } : {}
    for (const name in init) addHeader(record, name.toLowerCase(), init[name] as string)
  } else {
    if (!fastifyHasHeaders) return body === null ? NO_HEADERS : typeof body === 'string' ? TEXT_HEADERS : BYTES_HEADERS
    record = { ...fromFastify }
  }
  // The same defaults as the fallback: ours for text, Fastify's for bytes.
  if (body !== null && record['content-type'] === undefined) {
    record['content-type'] = typeof body === 'string' ? DEFAULT_TEXT_TYPE : 'application/octet-stream'
  }
  return record
}

/**
 * Whether anything was set on the raw response with setHeader() (a plugin
 * that bypasses reply.header(), for one). Node keeps those headers under a
 * private symbol described 'kOutHeaders', null until the first setHeader
 * (lib/_http_outgoing.js, checked on Node 20.20, 22.23, 24.22 and 26.12):
 * reading it saves the hasHeader() calls above, each a validation and a
 * toLowerCase, on every request. Without the symbol, getHeaderNames() answers.
 */
function hasRawHeaders (raw: FastifyReply['raw']): boolean {
  kOutHeaders ??= findSymbol(raw, 'kOutHeaders')
  if (kOutHeaders === null) return raw.getHeaderNames().length > 0
  return (raw as unknown as Record<symbol, object | null | undefined>)[kOutHeaders] != null
}

let kOutHeaders: symbol | null | undefined

function allowedOnFastPath (lowerName: string, value: string, streaming = false): boolean {
  // A stream goes out chunked anyway: an app's `Transfer-Encoding: chunked` (Hono's streaming helpers set it) is what Node does.
  if (streaming && lowerName === 'transfer-encoding') return value.toLowerCase() === 'chunked'
  if (lowerName === 'content-length' || lowerName === 'transfer-encoding' || lowerName === 'trailer') return false
  // eslint-disable-next-line no-control-regex
  if (lowerName === 'content-disposition' && /[^\x00-\x7f]/.test(value)) return false
  return true
}

/** Adds one app header (lowercase name) over what Fastify set: the app wins, Set-Cookie and Vary combine. */
function addHeader (record: Record<string, string | string[]>, name: string, value: string, streaming = false): boolean {
  if (!allowedOnFastPath(name, value, streaming)) return false
  const existing = record[name]
  if (existing === undefined) record[name] = value
  else if (name === 'set-cookie') record[name] = Array.isArray(existing) ? [...existing, value] : [existing, value]
  else if (name === 'vary') record[name] = combineVary(String(existing), value)
  else record[name] = value
  return true
}

/** A copy of the head with an explicit Content-Length (the guards ruled out one already there). */
function withLength (headers: HeadLines, length: number): HeadLines {
  if (isHeadList(headers)) return [...headers, 'content-length', String(length)]
  return { ...headers, 'content-length': String(length) }
}

function isHeadList (headers: HeadLines): headers is readonly string[] {
  return Array.isArray(headers)
}
