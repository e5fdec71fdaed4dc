import { STATUS_CODES, validateHeaderName, validateHeaderValue, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import { replyHeaders } from '../internals/fastify.js'
import { hasRawHeaders } from '../internals/node.js'
import { headerList, isLightweightHeaders } from '../web/headers.js'
import { DEFAULT_TEXT_TYPE, type ResponseParts } from '../web/response.js'
import type { SendReason } from './reasons.js'

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
 * The head for one of our writers: the app's headers over those Fastify
 * hooks stored with reply.header(), or the reason reply.send must write the
 * response instead. Guards: the app set Content-Length, Transfer-Encoding or
 * a Trailer (the framing is then the app's business, which reply.send
 * handles; a stream may say `Transfer-Encoding: chunked`, which is what Node
 * does anyway), a header value is not a plain string, a Content-Disposition
 * is not ASCII (with a preset length, Node re-encodes it as latin1 and
 * throws), or a framing header was set on the raw response. With nothing to
 * merge, the app's own record or list is returned as it is (writeHead only
 * reads it); with headers from Fastify hooks, Fastify's own record with the
 * app's merged in, as reply.send would pass it (takeBackMerge undoes that if
 * writeHead throws); otherwise a new object.
 */
export function outgoingHeaders (reply: FastifyReply, parts: ResponseParts, streaming: boolean): HeadLines | SendReason {
  return mergedHeaders(reply, parts, streaming, false) as HeadLines | SendReason
}

/**
 * The same merge as outgoingHeaders, always into a new record and without
 * a default Content-Type: the header record onSend hooks get to see and
 * change (on-send.ts), before reply.send's own defaults are applied to it.
 * App headers that Node would reject are refused here, before any hook runs,
 * as reply.send's preparation refuses them.
 */
export function headerRecord (reply: FastifyReply, parts: ResponseParts): Record<string, string | string[]> | SendReason | Error {
  return mergedHeaders(reply, parts, false, true) as Record<string, string | string[]> | SendReason | Error
}

function mergedHeaders (reply: FastifyReply, parts: ResponseParts, streaming: boolean, fresh: boolean): HeadLines | Record<string, string | string[]> | SendReason | Error {
  const raw = reply.raw as ServerResponse
  const rawHasHeaders = hasRawHeaders(raw)
  if (rawHasHeaders && (raw.hasHeader('content-length') || raw.hasHeader('transfer-encoding') || raw.hasHeader('trailer'))) return 'framing header set on the raw response'
  const fromFastify = replyHeaders(reply)
  lastMerge = undefined
  const fastifyHasHeaders = hasKeys(fromFastify)
  const { init, headers, body } = parts

  let record: Record<string, string | string[]>
  if (headers !== undefined) {
    if (isLightweightHeaders(headers)) {
      // The list as kept: validated, lowercase, no sorting needed on the wire.
      const list = headerList(headers)
      if (!fastifyHasHeaders) {
        let hasType = false
        let hasCookies = false
        for (let i = 0; i < list.length; i += 2) {
          const name = list[i]
          if (name === 'content-type') hasType = true
          else if (name === 'set-cookie') hasCookies = true
          else {
            const refused = refusedHeader(name, list[i + 1], streaming)
            if (refused !== undefined) return refused
          }
        }
        // With headers already set on the raw response, Node merges a list
        // name by name, keeping one Set-Cookie (Node 20.20): an object keeps them all.
        if (!fresh && (hasType || body === null) && (!hasCookies || !rawHasHeaders)) return list
      } else if (!fresh) {
        // Into Fastify's own record, as reply.send would hand it to writeHead: refusals first, so nothing is half-merged.
        for (let i = 0; i < list.length; i += 2) {
          const refused = refusedHeader(list[i], list[i + 1], streaming)
          if (refused !== undefined) return refused
        }
        for (let i = 0; i < list.length; i += 2) mergeInPlace(fromFastify, list[i], list[i + 1])
        return withDefaultType(fromFastify, body, true)
      }
      record = fastifyHasHeaders ? { ...fromFastify } : {}
      for (let i = 0; i < list.length; i += 2) {
        const refused = addHeader(record, list[i], list[i + 1], streaming)
        if (refused !== undefined) return refused
        if (fresh) {
          const invalid = invalidHeader(list[i], list[i + 1])
          if (invalid !== undefined) return invalid
        }
      }
    } else {
      record = fastifyHasHeaders ? { ...fromFastify } : {}
      for (const [name, value] of headers) {
        const refused = addHeader(record, name, value, streaming)
        if (refused !== undefined) return refused
        if (fresh) {
          const invalid = invalidHeader(name, value)
          if (invalid !== undefined) return invalid
        }
      }
    }
  } else if (init !== undefined && init !== null) {
    let hasType = false
    for (const name in init) {
      const value = init[name]
      if (typeof value !== 'string') return 'header value that is not a string'
      const lower = name.toLowerCase()
      if (lower === 'content-type') hasType = true
      else {
        const refused = refusedHeader(lower, value, streaming)
        if (refused !== undefined) return refused
      }
    }
    // The common case: the handler's record goes out as it is.
    if (!fresh && !fastifyHasHeaders && (hasType || body === null)) return init as OutgoingHttpHeaders
    if (!fresh && fastifyHasHeaders) {
      for (const name in init) mergeInPlace(fromFastify, name.toLowerCase(), init[name] as string)
      return withDefaultType(fromFastify, body, true)
    }
    record = fastifyHasHeaders ? { ...fromFastify } : {}
    for (const name in init) {
      addHeader(record, name.toLowerCase(), init[name] as string, streaming)
      if (fresh) {
        const invalid = invalidHeader(name, init[name] as string)
        if (invalid !== undefined) return invalid
      }
    }
  } else {
    if (fresh) return fastifyHasHeaders ? { ...fromFastify } : {}
    if (!fastifyHasHeaders) return body === null ? NO_HEADERS : typeof body === 'string' ? TEXT_HEADERS : BYTES_HEADERS
    return withDefaultType(fromFastify, body, true)
  }
  if (fresh) return record
  return withDefaultType(record, body, false)
}

/** The same default type as the fallback: ours for text, Fastify's for bytes. */
function withDefaultType (record: Record<string, string | string[]>, body: ResponseParts['body'], inPlace: boolean): Record<string, string | string[]> {
  if (body !== null && record['content-type'] === undefined) {
    const type = typeof body === 'string' ? DEFAULT_TEXT_TYPE : 'application/octet-stream'
    if (inPlace) mergeInPlace(record, 'content-type', type)
    else record['content-type'] = type
  }
  return record
}

/**
 * What the last merge into Fastify's own header record changed (name, then
 * the value before, or undefined), so that a writeHead that throws can put
 * the record back and Fastify's 500 carries none of the app's headers.
 * Merging into the reply's record, as reply.send hands it to writeHead,
 * spares a copy of every header Fastify hooks set (a dozen with some
 * plugins). Only valid until the next merge: writeHead follows the merge
 * synchronously.
 */
let lastMerge: { record: object, changes: Array<string | string[] | undefined> } | undefined

function mergeInPlace (record: Record<string, string | string[]>, name: string, value: string): void {
  if (lastMerge?.record !== record) lastMerge = { record, changes: [] }
  const existing = record[name]
  lastMerge.changes.push(name, existing)
  if (existing === undefined) record[name] = value
  else if (name === 'set-cookie') record[name] = Array.isArray(existing) ? [...existing, value] : [existing, value]
  else if (name === 'vary') record[name] = combineVary(String(existing), value)
  else record[name] = value
}

/**
 * After writeHead threw: the app's headers come back off Fastify's record, if
 * the head was merged into it. Called synchronously after the merge, so the
 * last merge is this response's.
 */
export function takeBackMerge (): void {
  const merge = lastMerge
  lastMerge = undefined
  if (merge === undefined) return
  const head = merge.record
  const changes = merge.changes
  for (let i = changes.length - 2; i >= 0; i -= 2) {
    const name = changes[i] as string
    const before = changes[i + 1]
    if (before === undefined) delete (head as Record<string, unknown>)[name]
    else (head as Record<string, unknown>)[name] = before
  }
}

/** Node's own error for a header writeHead would reject, or undefined. */
function invalidHeader (name: string, value: string): Error | undefined {
  try {
    validateHeaderName(name)
    validateHeaderValue(name, value)
  } catch (err) {
    return err as Error
  }
  return undefined
}

/** Whether a record has any key, without building a list of them: this runs on every request. */
function hasKeys (record: object): boolean {
  // eslint-disable-next-line no-unreachable-loop -- one iteration is all it takes to know
  for (const _key in record) return true
  return false
}

/** Why one app header (lowercase name) keeps a response off our writers, or undefined. */
function refusedHeader (lowerName: string, value: string, streaming: boolean): SendReason | undefined {
  if (lowerName === 'transfer-encoding') {
    // A stream goes out chunked anyway: an app's `Transfer-Encoding: chunked` (Hono's streaming helpers set it) is what Node does.
    return streaming && value.toLowerCase() === 'chunked' ? undefined : 'transfer-encoding set by the app'
  }
  if (lowerName === 'content-length') return 'content-length set by the app'
  if (lowerName === 'trailer') return 'trailer set by the app'
  if (lowerName === 'content-disposition' && !isAscii(value)) return 'non-ASCII content-disposition'
  return undefined
}

export function isAscii (value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    if (value.charCodeAt(i) > 0x7f) return false
  }
  return true
}

/** Adds one app header (lowercase name) over what Fastify set: the app wins, Set-Cookie and Vary combine. */
function addHeader (record: Record<string, string | string[]>, name: string, value: string, streaming: boolean): SendReason | undefined {
  const refused = refusedHeader(name, value, streaming)
  if (refused !== undefined) return refused
  const existing = record[name]
  if (existing === undefined) record[name] = value
  else if (name === 'set-cookie') record[name] = Array.isArray(existing) ? [...existing, value] : [existing, value]
  else if (name === 'vary') record[name] = combineVary(String(existing), value)
  else record[name] = value
  return undefined
}

/** A copy of the head with an explicit Content-Length (the guards ruled out one already there). */
export function withLength (headers: HeadLines, length: number): HeadLines {
  if (Array.isArray(headers)) return [...headers, 'content-length', String(length)]
  return { ...headers, 'content-length': String(length) }
}

/** A reason phrase other than the standard one for the status (Response's statusText). */
export function isCustomStatusText (status: number, statusText: string): boolean {
  return statusText !== '' && statusText !== STATUS_CODES[status]
}

// Connection-specific headers: HTTP/2 forbids them, and Node's
// Http2ServerResponse throws on them (checked on Node 20–26).
const http2Forbidden = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])

/**
 * A head for Node's Http2ServerResponse: an object, without the
 * connection-specific headers HTTP/2 forbids (a streaming helper's
 * `Transfer-Encoding: chunked`, for one), repeated names kept as arrays.
 */
export function http2Head (head: HeadLines): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {}
  const add = (name: string, value: string | number | readonly string[] | undefined): void => {
    const lower = name.toLowerCase()
    if (value === undefined || http2Forbidden.has(lower)) return
    const existing = out[lower]
    out[lower] = existing === undefined ? value as string : ([] as string[]).concat(typeof existing === 'number' ? String(existing) : existing, value as string)
  }
  if (Array.isArray(head)) {
    for (let i = 0; i < head.length; i += 2) add(head[i], head[i + 1])
  } else {
    const record = head as OutgoingHttpHeaders
    for (const name in record) add(name, record[name])
  }
  return out
}

/**
 * For reply.send: checks every header the app set before any of them reaches
 * the reply, so a value that `Headers` accepts but Node rejects (`'a\x01b'`)
 * fails here, with nothing half-written, and Fastify's error handler answers 500.
 */
export function assertWritableHeaders (headers: Headers): void {
  for (const [name, value] of headers) {
    validateHeaderName(name)
    validateHeaderValue(name, value)
  }
}

/**
 * For reply.send: copies the app's headers onto the reply, over what hooks
 * and plugins set before: the app wins a conflict, except for Set-Cookie
 * (each cookie kept, Fastify's reply.header appends them) and Vary (the two
 * lists combined).
 */
export function copyHeadersToReply (reply: FastifyReply, headers: Headers, http2: boolean): void {
  for (const [name, value] of headers) {
    if (http2 && http2Forbidden.has(name)) continue
    if (name === 'vary') {
      const existing = reply.getHeader('vary')
      reply.header('vary', existing === undefined ? value : combineVary(String(existing), value))
      continue
    }
    reply.header(name, value)
  }
}

/** Merges two Vary lists, each field once (case-insensitively), `*` absorbing the rest. */
export function combineVary (first: string, second: string): string {
  const seen = new Set<string>()
  const fields: string[] = []
  for (const field of (first + ',' + second).split(',')) {
    const trimmed = field.trim()
    if (trimmed === '') continue
    if (trimmed === '*') return '*'
    const key = trimmed.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    fields.push(trimmed)
  }
  return fields.join(', ')
}
