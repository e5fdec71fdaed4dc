import { STATUS_CODES, validateHeaderName, validateHeaderValue, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import { ownReplyHeaders, replyHeaders } from '../internals/fastify.js'
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
  lastMerge = undefined
  const raw = reply.raw as ServerResponse
  const rawHasHeaders = hasRawHeaders(raw)
  if (rawHasHeaders && (raw.hasHeader('content-length') || raw.hasHeader('transfer-encoding') || raw.hasHeader('trailer'))) return 'framing header set on the raw response'
  const fromFastify = replyHeaders(reply)
  const fastifyHasHeaders = hasKeys(fromFastify)
  const { init, headers, body } = parts

  if (headers !== undefined) {
    if (isLightweightHeaders(headers)) {
      // The list as kept: validated, lowercase, no sorting needed on the wire.
      const list = headerList(headers)
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
      if (!fastifyHasHeaders) {
        // With headers already set on the raw response, Node merges a list
        // name by name, keeping one Set-Cookie (Node 20.20): an object keeps them all.
        if ((hasType || body === null) && (!hasCookies || !rawHasHeaders)) return list
        const record: Record<string, string | string[]> = {}
        for (let i = 0; i < list.length; i += 2) addHeader(record, list[i], list[i + 1])
        return withDefaultType(record, body, undefined)
      }
      // Into Fastify's own record, as reply.send hands it to writeHead.
      const merge = lastMerge = { record: fromFastify, changes: [] }
      for (let i = 0; i < list.length; i += 2) mergeInPlace(merge, list[i], list[i + 1])
      return withDefaultType(fromFastify, body, merge)
    }
    // A native Headers (rare): copied.
    const record: Record<string, string | string[]> = fastifyHasHeaders ? { ...fromFastify } : {}
    for (const [name, value] of headers) {
      const refused = refusedHeader(name, value, streaming)
      if (refused !== undefined) return refused
      addHeader(record, name, value)
    }
    return withDefaultType(record, body, undefined)
  }
  if (init !== undefined && init !== null) {
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
    if (!fastifyHasHeaders) {
      if (hasType || body === null) return init as OutgoingHttpHeaders
      const record: Record<string, string | string[]> = {}
      for (const name in init) addHeader(record, name.toLowerCase(), init[name] as string)
      return withDefaultType(record, body, undefined)
    }
    const merge = lastMerge = { record: fromFastify, changes: [] }
    for (const name in init) mergeInPlace(merge, name.toLowerCase(), init[name] as string)
    return withDefaultType(fromFastify, body, merge)
  }
  if (!fastifyHasHeaders) return body === null ? NO_HEADERS : typeof body === 'string' ? TEXT_HEADERS : BYTES_HEADERS
  const merge = lastMerge = { record: fromFastify, changes: [] }
  return withDefaultType(fromFastify, body, merge)
}

/**
 * For onSend hooks (on-send.ts): the app's headers merged into the reply's
 * own header record, where the hooks see and change them through
 * reply.header() and getHeader(), as reply.send would have put them there.
 * No default Content-Type yet (the caller adds reply.send's, with `merge`).
 * Every app header is checked first, with the way out's guards and with
 * Node's validators (reply.send's preparation refuses what Node would), so
 * nothing is half-merged. Returns the merge, for undoMerge if a hook fails;
 * or why it cannot be done ('onSend hooks in scope' when the reply's record
 * cannot be reached), or Node's error.
 */
export function mergeIntoReply (reply: FastifyReply, parts: ResponseParts): Merge | SendReason | Error {
  const raw = reply.raw as ServerResponse
  if (hasRawHeaders(raw) && (raw.hasHeader('content-length') || raw.hasHeader('transfer-encoding') || raw.hasHeader('trailer'))) return 'framing header set on the raw response'
  const record = ownReplyHeaders(reply)
  if (record === undefined) return 'onSend hooks in scope'
  const { init, headers } = parts
  let list: readonly string[]
  if (headers !== undefined) {
    list = isLightweightHeaders(headers) ? headerList(headers) : [...headers].flat()
  } else if (init !== undefined && init !== null) {
    const pairs: string[] = []
    for (const name in init) {
      const value = init[name]
      if (typeof value !== 'string') return 'header value that is not a string'
      pairs.push(name.toLowerCase(), value)
    }
    list = pairs
  } else {
    list = []
  }
  for (let i = 0; i < list.length; i += 2) {
    const refused = refusedHeader(list[i], list[i + 1], false)
    if (refused !== undefined) return refused
    const invalid = invalidHeader(list[i], list[i + 1])
    if (invalid !== undefined) return invalid
  }
  const merge: Merge = { record, changes: [] }
  for (let i = 0; i < list.length; i += 2) mergeInPlace(merge, list[i], list[i + 1])
  return merge
}

/** The same default type as the fallback: ours for text, Fastify's for bytes. */
function withDefaultType (record: Record<string, string | string[]>, body: ResponseParts['body'], merge: Merge | undefined): Record<string, string | string[]> {
  if (body !== null && record['content-type'] === undefined) {
    const type = typeof body === 'string' ? DEFAULT_TEXT_TYPE : 'application/octet-stream'
    if (merge !== undefined) mergeInPlace(merge, 'content-type', type)
    else record['content-type'] = type
  }
  return record
}

/**
 * A merge into Fastify's own header record: the record, and what changed in
 * it (name, then the value before, or undefined), so that it can be put back
 * and an error answer carries none of the app's headers. Merging into the
 * reply's record, as reply.send hands it to writeHead, spares a copy of every
 * header Fastify hooks set (a dozen with some plugins).
 */
export interface Merge {
  record: Record<string, string | string[]>
  changes: Array<string | string[] | undefined>
}

/** The fast and stream writers' merge, for takeBackMerge: valid until the next outgoingHeaders, which writeHead follows synchronously. */
let lastMerge: Merge | undefined

/** Adds one header (lowercase name) over the record's, noting the change: the app wins, Set-Cookie and Vary combine. */
export function mergeInPlace (merge: Merge, name: string, value: string): void {
  const record = merge.record
  const existing = record[name]
  merge.changes.push(name, existing)
  if (existing === undefined) record[name] = value
  else if (name === 'set-cookie') record[name] = Array.isArray(existing) ? [...existing, value] : [existing, value]
  else if (name === 'vary') record[name] = combineVary(String(existing), value)
  else record[name] = value
}

/** Puts the record back as it was before the merge (later changes to other names stay). */
export function undoMerge (merge: Merge): void {
  const { record, changes } = merge
  for (let i = changes.length - 2; i >= 0; i -= 2) {
    const name = changes[i] as string
    const before = changes[i + 1]
    if (before === undefined) delete record[name]
    else record[name] = before
  }
  changes.length = 0
}

/**
 * After writeHead threw: the app's headers come back off Fastify's record, if
 * the head was merged into it. Called synchronously after outgoingHeaders,
 * so the last merge is this response's.
 */
export function takeBackMerge (): void {
  const merge = lastMerge
  lastMerge = undefined
  if (merge !== undefined) undoMerge(merge)
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

/** Adds one app header (lowercase name) to a new record: the app wins, Set-Cookie and Vary combine. */
function addHeader (record: Record<string, string | string[]>, name: string, value: string): void {
  const existing = record[name]
  if (existing === undefined) record[name] = value
  else if (name === 'set-cookie') record[name] = Array.isArray(existing) ? [...existing, value] : [existing, value]
  else if (name === 'vary') record[name] = combineVary(String(existing), value)
  else record[name] = value
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
