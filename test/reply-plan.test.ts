// The reply plan without a socket: for each guard, each body kind, HTTP/1
// and HTTP/2, HEAD, with and without onSend hooks (and hooks that cannot be
// read), the way out, the reason, and the head it plans. The socket tests
// (fast-path, on-send-hooks, way-out-log, http2) show what each way writes.
import { test } from 'tap'
import { Buffer } from 'node:buffer'
// Internals, as built: `npm test` builds first.
import { planReply, type BodyKind, type Plan, type ReplyFacts } from '../dist/reply/plan.js'
import { mergeHeaders } from '../dist/reply/head.js'
import { LightweightHeaders } from '../dist/web/headers.js'
import type { ResponseParts } from '../dist/web/response.js'

const hook = (): void => {}

function facts (over: Partial<ReplyFacts> = {}): ReplyFacts {
  return {
    hooks: null,
    headers: {},
    ownHeaders: true,
    method: 'GET',
    http2: false,
    headersSent: false,
    rawHeaders: false,
    rawFraming: false,
    rawContentType: false,
    chunking: true,
    nodeWritesLength: true,
    injected: false,
    ...over
  }
}

function parts (over: Partial<ResponseParts> = {}): ResponseParts {
  return { status: 200, body: 'hello', init: { 'content-type': 'text/plain' }, headers: undefined, headLength: undefined, appWrote: false, ...over }
}

/**
 * The head a writer gives writeHead for a plan whose merge goes into a new
 * record (not Fastify's): the merge made, as head.ts makes it.
 */
function written (plan: Plan): unknown {
  if (plan.merge === undefined) return plan.head
  const record = { ...(plan.head as Record<string, string | string[]>) }
  mergeHeaders(record, plan.merge, plan.defaultType)
  return record
}

const whole = Buffer.from('read whole')
const text = { 'content-type': 'text/plain' }

interface Case {
  name: string
  parts?: Partial<ResponseParts>
  body?: BodyKind
  statusText?: string
  facts?: Partial<ReplyFacts>
  way: Plan['way']
  reason?: string
}

const cases: Case[] = [
  // Stored bodies (lightweight responses).
  { name: 'stored text, HTTP/1, no hooks', way: 'fast' },
  { name: 'stored bytes', parts: { body: new Uint8Array([1, 2]), init: undefined }, way: 'fast' },
  { name: 'stored null body', parts: { body: null, init: undefined, status: 204 }, way: 'fast' },
  { name: 'stored, HTTP/2', facts: { http2: true }, way: 'reply.send', reason: 'HTTP/2' },
  { name: 'stored, hooks', facts: { hooks: [hook] }, way: 'after onSend hooks' },
  { name: 'stored, hooks, HTTP/2', facts: { hooks: [hook], http2: true }, way: 'reply.send', reason: 'HTTP/2' },
  { name: 'stored, hooks unreadable', facts: { hooks: undefined }, way: 'reply.send', reason: 'onSend hooks unreadable' },
  { name: 'stored, hooks, header record unreadable', facts: { hooks: [hook], ownHeaders: false }, way: 'reply.send', reason: 'onSend hooks unreadable' },
  { name: 'stored, headers already sent', facts: { headersSent: true }, way: 'reply.send', reason: 'headers already sent' },
  { name: 'stored, framing header on the raw response', facts: { rawHeaders: true, rawFraming: true }, way: 'reply.send', reason: 'framing header set on the raw response' },
  { name: 'stored, hooks, framing header on the raw response', facts: { hooks: [hook], rawHeaders: true, rawFraming: true }, way: 'reply.send', reason: 'framing header set on the raw response' },
  { name: 'stored, content-length', parts: { init: { 'Content-Length': '5' } }, way: 'reply.send', reason: 'content-length set by the app' },
  { name: 'stored, hooks, content-length', parts: { init: { 'content-length': '5' } }, facts: { hooks: [hook] }, way: 'reply.send', reason: 'content-length set by the app' },
  { name: 'stored, transfer-encoding', parts: { init: { 'transfer-encoding': 'chunked' } }, way: 'reply.send', reason: 'transfer-encoding set by the app' },
  { name: 'stored, trailer', parts: { init: { trailer: 'x' } }, way: 'reply.send', reason: 'trailer set by the app' },
  { name: 'stored, header value not a string', parts: { init: { 'x-a': ['1', '2'] } }, way: 'reply.send', reason: 'header value that is not a string' },
  { name: 'stored, non-ASCII content-disposition', parts: { init: { 'content-disposition': 'attachment; filename="é"' } }, way: 'reply.send', reason: 'non-ASCII content-disposition' },
  { name: 'stored, hooks, header Node rejects', parts: { init: { 'x-a': 'a\u0001b' } }, facts: { hooks: [hook] }, way: 'reply.send', reason: 'header Node rejects' },
  { name: 'stored, lightweight Headers', parts: { init: undefined, headers: new LightweightHeaders({ 'content-type': 'text/plain' }) as unknown as Headers }, way: 'fast' },
  { name: 'stored, native Headers', parts: { init: undefined, headers: new Headers({ 'content-type': 'text/plain' }) }, way: 'fast' },
  { name: 'stored, native Headers with content-length', parts: { init: undefined, headers: new Headers({ 'content-length': '5' }) }, way: 'reply.send', reason: 'content-length set by the app' },
  { name: 'stored, custom statusText is not looked at (a lightweight Response has none)', statusText: 'Fine', way: 'fast' },
  { name: 'stored, HEAD', facts: { method: 'HEAD', nodeWritesLength: false }, parts: { body: null, headLength: 5 }, way: 'fast' },

  // Native bodies read whole.
  { name: 'read whole, HTTP/1', body: 'read whole', parts: { body: whole, init: undefined, headers: new Headers(text) }, way: 'fast' },
  { name: 'read whole, HTTP/2', body: 'read whole', parts: { body: whole, init: undefined, headers: new Headers(text) }, facts: { http2: true }, way: 'reply.send', reason: 'HTTP/2' },
  { name: 'read whole, hooks', body: 'read whole', parts: { body: whole, init: undefined, headers: new Headers(text) }, facts: { hooks: [hook] }, way: 'after onSend hooks' },
  { name: 'read whole, HTTP/1.0', body: 'read whole', parts: { body: whole, init: undefined, headers: new Headers(text) }, facts: { chunking: false }, way: 'reply.send', reason: 'no chunked framing (HTTP/1.0)' },
  { name: 'read whole, HEAD', body: 'read whole', parts: { body: whole, init: undefined, headers: new Headers(text) }, facts: { method: 'HEAD' }, way: 'reply.send', reason: 'HEAD answered with a stream' },
  { name: 'read whole, custom statusText', body: 'read whole', statusText: 'Fine', parts: { body: whole, init: undefined, headers: new Headers(text) }, way: 'reply.send', reason: 'custom statusText' },
  { name: 'read whole, standard statusText', body: 'read whole', statusText: 'OK', parts: { body: whole, init: undefined, headers: new Headers(text) }, way: 'fast' },

  // Native live streams.
  { name: 'live stream, HTTP/1', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, way: 'stream' },
  { name: 'live stream, HTTP/2', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { http2: true }, way: 'stream' },
  { name: 'live stream, HTTP/2, custom statusText (none on HTTP/2)', body: 'live stream', statusText: 'Fine', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { http2: true }, way: 'stream' },
  { name: 'live stream, hooks', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { hooks: [hook] }, way: 'reply.send', reason: 'onSend hooks on a stream' },
  { name: 'live stream, hooks unreadable', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { hooks: undefined }, way: 'reply.send', reason: 'onSend hooks unreadable' },
  { name: 'live stream, HTTP/1.0', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { chunking: false }, way: 'reply.send', reason: 'no chunked framing (HTTP/1.0)' },
  { name: 'live stream, HTTP/2 needs no chunking', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { http2: true, chunking: false }, way: 'stream' },
  { name: 'live stream, HEAD', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { method: 'HEAD' }, way: 'reply.send', reason: 'HEAD answered with a stream' },
  { name: 'live stream, chunked by the app', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers({ 'transfer-encoding': 'chunked' }) }, way: 'stream' },
  { name: 'live stream, other transfer-encoding', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers({ 'transfer-encoding': 'gzip' }) }, way: 'reply.send', reason: 'transfer-encoding set by the app' },
  { name: 'live stream, content-length', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers({ 'content-length': '9' }) }, way: 'reply.send', reason: 'content-length set by the app' },
  { name: 'live stream, headers already sent', body: 'live stream', parts: { body: null, init: undefined, headers: new Headers(text) }, facts: { headersSent: true }, way: 'reply.send', reason: 'headers already sent' },

  // Native responses without a body.
  { name: 'no body', body: 'none', parts: { body: null, init: undefined, headers: new Headers() }, way: 'reply.send', reason: 'no body to stream' },
  { name: 'no body, HTTP/2', body: 'none', parts: { body: null, init: undefined, headers: new Headers() }, facts: { http2: true }, way: 'reply.send', reason: 'no body to stream' },
  // The app wrote the raw response and returned the marker saying so: before every guard.
  { name: 'the app wrote it', parts: { body: null, init: undefined, appWrote: true }, facts: { hooks: undefined, headersSent: true }, way: 'the app itself', reason: undefined },
  { name: 'the app wrote it, native', body: 'none', parts: { body: null, init: undefined, headers: new Headers(), appWrote: true }, facts: { http2: true, hooks: [hook] }, way: 'the app itself', reason: undefined }
]

test('the way out and the reason, for each guard and body kind', async (t) => {
  for (const c of cases) {
    const plan = planReply(parts(c.parts), c.body ?? 'stored', c.statusText ?? '', facts(c.facts))
    t.equal(plan.way, c.way, `${c.name}: ${c.way}`)
    t.equal(plan.reason, c.reason, `${c.name}: reason ${String(c.reason)}`)
  }
})

test('the fast head: the handler record as it is, the length for Node to write', async (t) => {
  const init = { 'content-type': 'text/plain', 'x-a': '1' }
  const plan = planReply(parts({ init }), 'stored', '', facts())
  t.equal(plan.head, init, 'the handler record, not a copy')
  t.equal(plan.merge, undefined)
  t.equal(plan.length, 5)
  t.equal(plan.nodeWritesLength, true)
  t.equal(plan.body, 'hello')
  t.equal(plan.status, 200)
})

test('the fast head: an explicit length where Node cannot write one (HTTP/1.0)', async (t) => {
  const plan = planReply(parts({ body: 'héllo' }), 'stored', '', facts({ nodeWritesLength: false, chunking: false }))
  t.equal(plan.way, 'fast')
  t.equal(plan.length, 6, 'bytes, not characters')
  t.equal(plan.nodeWritesLength, false)
})

test('the default Content-Type: ours for text, Fastify\'s for bytes', async (t) => {
  const textPlan = planReply(parts({ init: { 'x-a': '1' } }), 'stored', '', facts())
  t.same(textPlan.head, {}, 'a new record')
  t.same(written(textPlan), { 'x-a': '1', 'content-type': 'text/plain; charset=UTF-8' })
  const bytesPlan = planReply(parts({ body: new Uint8Array([1]), init: undefined }), 'stored', '', facts())
  t.same(written(bytesPlan), { 'content-type': 'application/octet-stream' })
  const none = planReply(parts({ body: null, init: undefined }), 'stored', '', facts())
  t.same(none.head, {})
})

test('headers from Fastify hooks: a merge into Fastify\'s record, described, not made', async (t) => {
  const fromFastify = { 'x-hook': 'h' }
  const init = { 'x-a': '1' }
  const plan = planReply(parts({ init }), 'stored', '', facts({ headers: fromFastify }))
  t.equal(plan.way, 'fast')
  t.equal(plan.head, fromFastify, 'Fastify\'s own record')
  t.equal(plan.merge, init, 'the app\'s headers to merge')
  t.equal(plan.defaultType, 'text/plain; charset=UTF-8')
  t.same(fromFastify, { 'x-hook': 'h' }, 'the plan left the record as it was')
})

test('a lightweight Headers list goes to writeHead as it is, unless Set-Cookie meets raw headers', async (t) => {
  const headers = new LightweightHeaders([['content-type', 'text/plain'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2']]) as unknown as Headers
  const plain = planReply(parts({ init: undefined, headers }), 'stored', '', facts())
  t.same(plain.head, ['content-type', 'text/plain', 'set-cookie', 'a=1', 'set-cookie', 'b=2'])
  const withRaw = planReply(parts({ init: undefined, headers }), 'stored', '', facts({ rawHeaders: true }))
  t.same(written(withRaw), { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] }, 'an object keeps both cookies')
})

test('HEAD made from a GET response announces the GET body\'s length', async (t) => {
  const plan = planReply(parts({ body: null, headLength: 12 }), 'stored', '', facts({ method: 'HEAD', nodeWritesLength: false }))
  t.equal(plan.length, 12)
  t.equal(plan.nodeWritesLength, false)
  const hooked = planReply(parts({ body: null, headLength: 12 }), 'stored', '', facts({ method: 'HEAD', hooks: [hook] }))
  t.equal(hooked.way, 'after onSend hooks')
  t.equal(hooked.length, 12)
  const sent = planReply(parts({ body: null, headLength: 12 }), 'stored', '', facts({ method: 'HEAD', http2: true }))
  t.equal(sent.way, 'reply.send')
  t.equal(sent.length, 12, 'reply.send gets it from the plan too')
  const get = planReply(parts({ body: null, headLength: 12 }), 'stored', '', facts({ http2: true }))
  t.equal(get.length, undefined, 'only for HEAD')
})

test('204 and 304 carry no length and no body', async (t) => {
  for (const status of [204, 304]) {
    const plan = planReply(parts({ status, body: null, init: undefined }), 'stored', '', facts())
    t.equal(plan.length, undefined, `${status}: no length`)
    t.equal(plan.body, null)
  }
})

test('after onSend hooks: the app\'s headers merged as they are, in lowercase, the default type only where neither side has one', async (t) => {
  const init = { 'X-A': '1' }
  const plan = planReply(parts({ init }), 'stored', '', facts({ hooks: [hook] }))
  t.equal(plan.merge, init, 'the handler\'s record, not a copy of it')
  const record: Record<string, string | string[]> = { 'x-hook': 'h' }
  mergeHeaders(record, plan.merge!, plan.defaultType, undefined, true)
  t.same(record, { 'x-hook': 'h', 'x-a': '1', 'content-type': 'text/plain; charset=UTF-8' }, 'merged under lowercase names')
  t.equal(plan.defaultType, 'text/plain; charset=UTF-8')
  const refused = planReply(parts({ init: { 'X-A': 'a\x01b' } }), 'stored', '', facts({ hooks: [hook] }))
  t.equal(refused.way, 'reply.send', 'a value Node rejects is refused before anything is merged')
  const typed = planReply(parts({ init: { 'X-A': '1' } }), 'stored', '', facts({ hooks: [hook], headers: { 'content-type': 'text/html' } }))
  t.equal(typed.defaultType, undefined, 'Fastify\'s record has one')
  const rawTyped = planReply(parts({ init: { 'X-A': '1' } }), 'stored', '', facts({ hooks: [hook], rawHeaders: true, rawContentType: true }))
  t.equal(rawTyped.defaultType, undefined, 'the raw response has one')
})

test('a live stream over HTTP/2: an object head without HTTP/1\'s connection headers', async (t) => {
  const fastifyHeaders = { 'x-hook': 'h' }
  const plan = planReply(parts({ body: null, init: undefined, headers: new Headers({ 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' }) }), 'live stream', '', facts({ http2: true, headers: fastifyHeaders }))
  t.equal(plan.way, 'stream')
  t.same(written(plan), { 'x-hook': 'h', 'content-type': 'text/event-stream' }, 'without Transfer-Encoding')
  t.not(plan.head, fastifyHeaders, 'merged into a copy, not Fastify\'s record')
})

test('inject(): the length goes to writeHead, where light-my-request sees it', async (t) => {
  const plan = planReply(parts(), 'stored', '', facts({ injected: true }))
  t.equal(plan.way, 'fast')
  t.equal(plan.length, 5)
  t.equal(plan.nodeWritesLength, false, 'explicit, not written by Node')
})
