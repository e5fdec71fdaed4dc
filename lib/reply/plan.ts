import { Buffer } from 'node:buffer'
import { STATUS_CODES, validateHeaderValue, type OutgoingHttpHeaders } from 'node:http'
import type { OnSendHook } from '../internals/fastify.js'
import { nodeAcceptsHeaderName } from '../internals/node.js'
import { headerList, isLightweightHeaders, lowercaseName } from '../web/headers.js'
import { defaultTypeOf, isNullBodyStatus, type ResponseParts } from '../web/response.js'
import type { StoredBody } from '../web/shared-body.js'
import type { SendReason } from './reasons.js'

/**
 * The reply plan: given what is known of the app's Response and what the
 * reply already holds, which way the response goes out, why when that is
 * reply.send, and the head to write. Every guard of the way out is checked
 * here, once; the writers carry the plan out and decide nothing. The
 * function is pure: it reads its arguments, builds the head (a new object
 * only where the app's own record or list cannot go to writeHead as it is)
 * and never writes to the reply. A merge into Fastify's header record is
 * described (`merge`), not made: the writer makes it, and can undo it.
 */

/**
 * The ways out: the plugin's own writer (`fast` for a stored body, `stream`
 * for a live one), the plugin's run of the onSend hooks, Fastify's
 * reply.send; and `the app itself`, when the app wrote the raw response and
 * returned the marker that says so.
 */
export type WayOut = 'fast' | 'stream' | 'after onSend hooks' | 'reply.send' | 'the app itself'

/**
 * What is known of the body:
 * - `stored`: a lightweight Response's stored string, bytes or null;
 * - `read whole`: a native body that turned out to be complete (parts.body, a Buffer);
 * - `live stream`: a native body still streaming (its ready part read already);
 * - `none`: a native Response without a body, or with a null body status.
 */
export type BodyKind = 'stored' | 'read whole' | 'live stream' | 'none'

/** What writeHead is given: an object, or a flat list of names and values (Node 20–26 accept both, and only read them). */
export type HeadLines = OutgoingHttpHeaders | readonly string[]

/** The app's headers, as a merge reads them: a flat list of lowercase names and values, or the handler's record. */
export type AppHeaders = readonly string[] | Readonly<Record<string, string | readonly string[]>>

/** What the reply holds when the plan is made (way-out.ts reads it; a unit test writes it). */
export interface ReplyFacts {
  /** The route's onSend hooks: null for none, undefined when they cannot be read. */
  hooks: readonly OnSendHook[] | null | undefined
  /** The headers stored with reply.header(). */
  headers: Readonly<Record<string, string | string[]>>
  /** Whether that record is the reply's own, which onSend hooks see (not a copy); read only where there are hooks. */
  ownHeaders: boolean
  method: string
  http2: boolean
  headersSent: boolean
  /** Something was set on the raw response with setHeader(). */
  rawHeaders: boolean
  /** Content-Length, Transfer-Encoding or Trailer was set on the raw response. */
  rawFraming: boolean
  /** Content-Type was set on the raw response. */
  rawContentType: boolean
  /** The response can be framed with chunks (false for HTTP/1.0). */
  chunking: boolean
  /** Node can write the Content-Length itself (internals/node.ts, nodeWritesLength). */
  nodeWritesLength: boolean
  /** The response is fastify.inject()'s (internals/light-my-request.ts), which sees only the headers writeHead is given. */
  injected: boolean
}

/** What writing a head takes (head.ts, writePlannedHead). */
export type HeadPlan = Pick<Plan, 'status' | 'head' | 'merge' | 'defaultType' | 'length' | 'nodeWritesLength'>

export interface Plan {
  way: WayOut
  /** For `reply.send`: the guard that sent the response there. With readable onSend hooks the send writer runs them. */
  reason: SendReason | undefined
  status: number
  /** The head for writeHead: the app's record or list as it is, or a record (Fastify's, or a new one) with `merge` to make first. */
  head: HeadLines
  /** App headers to merge into `head` (Fastify's record, a new record, or for `after onSend hooks` the reply's own) before it is written. */
  merge: AppHeaders | undefined
  /** A Content-Type to add with the merge when neither side has one. */
  defaultType: string | undefined
  /** A Content-Length to announce: written by Node (`nodeWritesLength`) or added to a copy of the head. */
  length: number | undefined
  nodeWritesLength: boolean
  /** What the fast writer ends the response with. */
  body: StoredBody
}

// Shared, frozen: writeHead only reads the object it is given.
const NO_HEADERS: OutgoingHttpHeaders = Object.freeze({})
const TEXT_HEADERS: OutgoingHttpHeaders = Object.freeze({ 'content-type': defaultTypeOf('') })
const BYTES_HEADERS: OutgoingHttpHeaders = Object.freeze({ 'content-type': defaultTypeOf(new Uint8Array(0)) })

/**
 * The plan. `parts` holds the status, the stored body or the Buffer read
 * whole (null otherwise) and the headers; `statusText` is a native
 * Response's reason phrase ('' for a lightweight one).
 */
export function planReply (parts: ResponseParts, body: BodyKind, statusText: string, facts: ReplyFacts): Plan {
  if (parts.appWrote) return { way: 'the app itself', reason: undefined, status: parts.status, head: NO_HEADERS, merge: undefined, defaultType: undefined, length: undefined, nodeWritesLength: false, body: null }
  const hooks = facts.hooks
  // onSend hooks the plugin cannot read (or run) are left to reply.send.
  if (hooks === undefined) return viaReply(parts, facts, 'onSend hooks unreadable')
  if (facts.headersSent) return viaReply(parts, facts, 'headers already sent')
  if (body !== 'stored') {
    // Native: what rules out streaming is checked before the body's kind matters.
    if (body === 'none') return viaReply(parts, facts, 'no body to stream')
    if (!facts.http2 && !facts.chunking) return viaReply(parts, facts, 'no chunked framing (HTTP/1.0)')
    if (facts.method === 'HEAD') return viaReply(parts, facts, 'HEAD answered with a stream')
    // HTTP/2 has no reason phrase.
    if (!facts.http2 && isCustomStatusText(parts.status, statusText)) return viaReply(parts, facts, 'custom statusText')
  }
  if (body === 'live stream') {
    const plan = planHead(parts, facts, true)
    if (plan.way === 'reply.send') return plan
    if (hooks !== null) return viaReply(parts, facts, 'onSend hooks on a stream')
    plan.way = 'stream'
    if (facts.http2) {
      // Node's Http2ServerResponse takes an object, without HTTP/1's
      // connection headers: a new one, so a merge never reaches Fastify's record.
      plan.head = http2Head(plan.head)
      if (plan.merge !== undefined) plan.merge = withoutHttp2Forbidden(plan.merge)
    }
    return plan
  }
  // A stored body: the fast writer needs Node's HTTP/1 fields.
  if (facts.http2) return viaReply(parts, facts, 'HTTP/2')
  if (hooks !== null) return planAfterHooks(parts, facts)
  const plan = planHead(parts, facts, false)
  if (plan.way === 'fast') planLength(plan, parts, facts)
  return plan
}

function viaReply (parts: ResponseParts, facts: ReplyFacts, reason: SendReason): Plan {
  const length = answersHead(parts, facts) ? parts.headLength : undefined
  return { way: 'reply.send', reason, status: parts.status, head: NO_HEADERS, merge: undefined, defaultType: undefined, length, nodeWritesLength: false, body: null }
}

/**
 * A HEAD answer made from a GET response (`new Response(null, getResponse)`,
 * as Hono answers HEAD): it announces the GET body's length
 * (parts.headLength), on every way out.
 */
function answersHead (parts: ResponseParts, facts: ReplyFacts): boolean {
  return facts.method === 'HEAD' && parts.body === null
}

/**
 * The head for the fast or stream writer: the app's headers over those
 * Fastify hooks stored with reply.header(), or reply.send when a header
 * guard fails. With nothing to merge, the app's own record or list goes to
 * writeHead as it is; with headers from Fastify hooks, the app's are to be
 * merged into Fastify's record, as reply.send passes it; otherwise into a
 * new, empty record (with the default type, or both Set-Cookie values kept).
 * Every merge is made by the writer (head.ts), the one place headers combine.
 */
function planHead (parts: ResponseParts, facts: ReplyFacts, streaming: boolean): Plan {
  if (facts.rawFraming) return viaReply(parts, facts, 'framing header set on the raw response')
  const fromFastify = facts.headers
  const fastifyHasHeaders = hasKeys(fromFastify)
  const { init, headers, body } = parts
  const type = body === null ? undefined : defaultTypeOf(body)
  let head: HeadLines
  let merge: AppHeaders | undefined

  if (headers !== undefined) {
    if (isLightweightHeaders(headers)) {
      // The list as kept: validated, lowercase.
      const list = headerList(headers)
      let hasType = false
      let hasCookies = false
      for (let i = 0; i < list.length; i += 2) {
        const name = list[i]
        if (name === 'content-type') hasType = true
        else if (name === 'set-cookie') hasCookies = true
        else {
          const refused = refusedHeader(name, list[i + 1], streaming)
          if (refused !== undefined) return viaReply(parts, facts, refused)
        }
      }
      if (fastifyHasHeaders) {
        head = fromFastify
        merge = list
      } else if ((hasType || body === null) && (!hasCookies || !facts.rawHeaders)) {
        // With headers already set on the raw response, Node merges a list
        // name by name, keeping one Set-Cookie (Node 20.20): an object keeps them all.
        head = list
      } else {
        head = {}
        merge = list
      }
    } else {
      // A native Headers (rare): copied.
      const list: string[] = []
      for (const [name, value] of headers) {
        const refused = refusedHeader(name, value, streaming)
        if (refused !== undefined) return viaReply(parts, facts, refused)
        list.push(name, value)
      }
      head = fastifyHasHeaders ? fromFastify : {}
      merge = list
    }
  } else if (init !== undefined && init !== null) {
    let hasType = false
    for (const name in init) {
      const value = init[name]
      if (typeof value !== 'string') return viaReply(parts, facts, 'header value that is not a string')
      const lower = lowercaseName(name)
      if (lower === 'content-type') hasType = true
      else {
        const refused = refusedHeader(lower, value, streaming)
        if (refused !== undefined) return viaReply(parts, facts, refused)
      }
    }
    if (fastifyHasHeaders) {
      head = fromFastify
      merge = init
    } else if (hasType || body === null) {
      // The common case: the handler's record goes out as it is.
      head = init as OutgoingHttpHeaders
    } else {
      head = {}
      merge = init
    }
  } else if (fastifyHasHeaders) {
    head = fromFastify
    merge = EMPTY_LIST
  } else {
    head = body === null ? NO_HEADERS : typeof body === 'string' ? TEXT_HEADERS : BYTES_HEADERS
  }
  return { way: 'fast', reason: undefined, status: parts.status, head, merge, defaultType: merge === undefined ? undefined : type, length: undefined, nodeWritesLength: false, body }
}

const EMPTY_LIST: readonly string[] = Object.freeze([])

/**
 * The Content-Length of a stored body: none for 204 and 304 (Node marks
 * them bodiless), Node's own where it can write one, else explicit (and
 * explicit for inject(), so that it shows the length the socket shows). A HEAD
 * answer made from a GET response announces the GET body's length.
 */
function planLength (plan: Plan, parts: ResponseParts, facts: ReplyFacts): void {
  const status = parts.status
  if (isNullBodyStatus(status)) plan.body = null
  if (status === 204 || status === 304) return
  const body = plan.body
  const length = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
  if (facts.nodeWritesLength && !facts.injected) {
    plan.length = length
    plan.nodeWritesLength = true
  } else if (answersHead(parts, facts)) {
    plan.length = parts.headLength
  } else {
    // HTTP/1.0 (no chunking) or a HEAD answer with a body: the length must be explicit.
    plan.length = length
  }
}

/**
 * A stored body with onSend hooks: the app's headers will be merged into the
 * reply's own header record, where the hooks see and change them, with
 * reply.send's default type; a HEAD answer gets the GET's length. Every app
 * header is checked first, with the way out's guards and Node's validators
 * (reply.send's preparation refuses what Node would), so nothing is
 * half-merged.
 */
function planAfterHooks (parts: ResponseParts, facts: ReplyFacts): Plan {
  if (facts.rawFraming) return viaReply(parts, facts, 'framing header set on the raw response')
  if (!facts.ownHeaders) return viaReply(parts, facts, 'onSend hooks unreadable')
  const { init, headers, body, status } = parts
  // The app's headers as they are, a list or the handler's record (merged as
  // they are too: head.ts), each checked first.
  let merge: AppHeaders = EMPTY_LIST
  let hasType = false
  if (headers !== undefined) {
    const list = isLightweightHeaders(headers) ? headerList(headers) : [...headers].flat()
    for (let i = 0; i < list.length; i += 2) {
      const refused = refusedHeader(list[i], list[i + 1], false) ?? invalidHeader(list[i], list[i + 1])
      if (refused !== undefined) return viaReply(parts, facts, refused)
      if (list[i] === 'content-type') hasType = true
    }
    merge = list
  } else if (init !== undefined && init !== null) {
    for (const name in init) {
      const value = init[name]
      if (typeof value !== 'string') return viaReply(parts, facts, 'header value that is not a string')
      const lower = lowercaseName(name)
      const refused = refusedHeader(lower, value, false) ?? invalidHeader(lower, value)
      if (refused !== undefined) return viaReply(parts, facts, refused)
      if (lower === 'content-type') hasType = true
    }
    merge = init
  }
  const sendsBody = body !== null && !isNullBodyStatus(status)
  const plan: Plan = { way: 'after onSend hooks', reason: undefined, status, head: facts.headers, merge, defaultType: undefined, length: undefined, nodeWritesLength: false, body: sendsBody ? body : null }
  if (sendsBody && !hasType && facts.headers['content-type'] === undefined && !facts.rawContentType) plan.defaultType = defaultTypeOf(body)
  else if (answersHead(parts, facts)) plan.length = parts.headLength
  return plan
}

/** Why one app header (lowercase name) keeps a response off our writers, or undefined. */
function refusedHeader (lowerName: string, value: string, streaming: boolean): SendReason | undefined {
  if (lowerName === 'transfer-encoding') {
    // A stream goes out chunked anyway: an app's `Transfer-Encoding: chunked` (Hono's streaming helpers set it) is what Node does.
    return streaming && value.toLowerCase() === 'chunked' ? undefined : 'transfer-encoding set by the app'
  }
  if (lowerName === 'content-length') return 'content-length set by the app'
  if (lowerName === 'trailer') return 'trailer set by the app'
  // With a preset length, Node re-encodes the head as latin1 and throws.
  if (lowerName === 'content-disposition' && !isAscii(value)) return 'non-ASCII content-disposition'
  return undefined
}

/** A header Node's validators reject ('a\x01b', which Headers accepts). */
function invalidHeader (name: string, value: string): SendReason | undefined {
  if (!nodeAcceptsHeaderName(name)) return 'header Node rejects'
  try {
    validateHeaderValue(name, value)
  } catch {
    return 'header Node rejects'
  }
  return undefined
}

export function isAscii (value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    if (value.charCodeAt(i) > 0x7f) return false
  }
  return true
}

/** A reason phrase other than the standard one for the status (Response's statusText). */
export function isCustomStatusText (status: number, statusText: string): boolean {
  return statusText !== '' && statusText !== STATUS_CODES[status]
}

/** Whether a record has any key, without building a list of them: this runs on every request. */
function hasKeys (record: object): boolean {
  // eslint-disable-next-line no-unreachable-loop -- one iteration is all it takes to know
  for (const _key in record) return true
  return false
}

/**
 * Whether HTTP/2 forbids the header (lowercase name): the connection-specific
 * ones, on which Node's Http2ServerResponse throws (checked on Node 20–26).
 */
export function isHttp2Forbidden (name: string): boolean {
  switch (name) {
    case 'connection':
    case 'keep-alive':
    case 'proxy-connection':
    case 'transfer-encoding':
    case 'upgrade':
      return true
    default:
      return false
  }
}

/** The app's headers as a list without those HTTP/2 forbids, to merge into an HTTP/2 head. */
function withoutHttp2Forbidden (source: AppHeaders): readonly string[] {
  const list: string[] = []
  if (Array.isArray(source)) {
    const pairs = source as readonly string[]
    for (let i = 0; i < pairs.length; i += 2) if (!isHttp2Forbidden(pairs[i])) list.push(pairs[i], pairs[i + 1])
  } else {
    const record = source as Readonly<Record<string, string>>
    for (const name in record) {
      const lower = lowercaseName(name)
      if (!isHttp2Forbidden(lower)) list.push(lower, record[name])
    }
  }
  return list
}

/**
 * A head for Node's Http2ServerResponse: an object, without the
 * connection-specific headers HTTP/2 forbids (a streaming helper's
 * `Transfer-Encoding: chunked`, for one), repeated names kept as arrays.
 */
export function http2Head (head: HeadLines): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {}
  const add = (name: string, value: string | number | readonly string[] | undefined): void => {
    const lower = lowercaseName(name)
    if (value === undefined || isHttp2Forbidden(lower)) return
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
