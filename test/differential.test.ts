// Differential tests: the same Hono app (test/fixtures/differential/apps.mjs)
// served by @hono/node-server, the reference, and by this plugin, each in a
// child process; the same requests sent to both over real sockets; and what
// came back compared: status and reason, headers as a set, the framing
// (Content-Length, chunked, close-delimited), the body bytes, when the head
// and the first body bytes arrived where that matters, and what the app
// observed (body reads, onAbort, the abort signal, the handler's end).
//
// Intended differences are listed, with their reasons, in
// fixtures/differential/differences.mjs and asserted as such. Scenarios that
// fail today and are being fixed are listed in fixtures/differential/pending.mjs
// and run as `todo`.
import { test } from 'tap'
import { Buffer } from 'node:buffer'
import { appendFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import {
  h2, h2View, observed, requestBytes, responseView, startSide, truncatedView, wire,
  type H2Options, type H2Outcome, type Side, type Step, type WireOutcome
} from './helpers/differential'
// @ts-expect-error: plain ESM fixture without types
import { pending } from './fixtures/differential/pending.mjs'
import { referenceUnavailable } from './helpers/reference'
// @ts-expect-error: plain ESM fixture without types
import { differences, ignoredHeadersReason } from './fixtures/differential/differences.mjs'

type View = Record<string, unknown>
interface Result { view: View, notes: View }

interface Scenario {
  id: string
  run: (side: Side, id: string) => Promise<Result>
  /** What the reference must show (derived values and facts), so that two equally wrong answers do not pass. */
  reference?: View
  /** Served by a reference process of its own (the reference does not survive it). */
  fresh?: boolean
}

/** The assertions a difference makes: tap's, with a pending scenario's `todo` added. */
interface Asserter {
  ok: (value: unknown, message: string, extra?: object) => boolean
  strictSame: (actual: unknown, expected: unknown, message: string, extra?: object) => boolean
}

interface Difference {
  id: string
  reason: string
  /** The scenarios it shows in; each may have its own expectation. */
  scenarios: string[]
  /** The fields of the view it explains in a scenario: not compared, asserted by `assert` instead. */
  fields: (scenario: string) => string[]
  assert: (t: Asserter, reference: View, plugin: View, scenario: string) => void
}

const pendingReasons = pending as Map<string, string>
const intended = differences as Difference[]
const allLive = process.env.DIFFERENTIAL_ALL === '1'
/** DIFFERENTIAL_REPORT=file writes each scenario's two results there, one JSON line each. */
const reportFile = process.env.DIFFERENTIAL_REPORT

// ---------------------------------------------------------------------------
// Scenario builders

function withId (path: string, id: string): string {
  return path + (path.includes('?') ? '&' : '?') + 'id=' + encodeURIComponent(id)
}

interface H1Spec {
  method?: string
  /** The app's path (the prefix and the id are added), or the whole request-target given the prefix and id. */
  path: string | ((prefix: string, id: string) => string)
  headers?: Record<string, string | undefined>
  body?: string | Buffer
  version?: '1.0' | '1.1'
  keepAlive?: boolean
  steps?: Step[]
  leave?: 'head' | 'first-body' | number
  closeWithin?: number
  responses?: number
  /** Requests sent after the first on the same connection (pipelined), app paths. */
  then?: Array<{ method: string, path: string }>
  /** Wait for these facts (up to `timeout` ms) and compare what the app observed. */
  observe?: { until?: string[], timeout?: number }
  /** Values derived from the exchange (timings and the like), compared too. */
  derive?: (outcome: WireOutcome) => View
  timeout?: number
}

/** Waits a little, then says whether the side's process still runs. */
async function aliveAfter (side: Side, ms: number): Promise<boolean> {
  await new Promise((resolve) => setTimeout(resolve, ms))
  return side.alive()
}

function h1 (id: string, spec: H1Spec, reference?: View): Scenario {
  return {
    id,
    reference,
    async run (side, runId) {
      const method = spec.method ?? 'GET'
      const target = typeof spec.path === 'function' ? spec.path(side.prefix, runId) : side.prefix + withId(spec.path, runId)
      let request = requestBytes(method, target, { headers: spec.headers, body: spec.body, version: spec.version, close: !(spec.keepAlive ?? false) && spec.then === undefined })
      for (const next of spec.then ?? []) {
        request = Buffer.concat([request, requestBytes(next.method, side.prefix + withId(next.path, runId), { close: next === spec.then![spec.then!.length - 1] })])
      }
      const outcome = await wire(side.port, {
        request,
        method,
        steps: spec.steps,
        leave: spec.leave,
        closeWithin: spec.closeWithin,
        responses: 1 + (spec.then?.length ?? 0),
        timeout: spec.timeout
      })
      const view: View = {}
      if (outcome.responses.length === 1) Object.assign(view, responseView(outcome.responses[0], side))
      else if (outcome.responses.length > 1) view.responses = outcome.responses.map((response) => responseView(response, side))
      else if (outcome.truncated !== undefined) Object.assign(view, truncatedView(outcome.truncated, side), { cutOff: true })
      else view.response = outcome.left ? 'none before the client left' : `none (${outcome.error ?? (outcome.timedOut ? 'timed out' : 'closed')})`
      if (outcome.left) delete view.body
      view.interim = outcome.interim
      if (spec.derive !== undefined) Object.assign(view, spec.derive(outcome))
      const notes: View = timings(outcome)
      if (spec.observe !== undefined) {
        const seen = await observed(side, runId, spec.observe.until, spec.observe.timeout ?? 0)
        view.observed = seen.facts
        notes.observedNotes = seen.notes
        notes.observeTimedOut = seen.timedOut
      }
      return { view, notes }
    }
  }
}

function timings (outcome: WireOutcome): View {
  const { headAt, firstBodyAt, completeAt, closedAt, error, timedOut, left } = outcome
  return { headAt, firstBodyAt, completeAt, closedAt, error, timedOut, left }
}

const get = (id: string, path: string, extra: Partial<H1Spec> = {}, reference?: View): Scenario => h1(id, { path, ...extra }, reference)

interface H2Spec extends Omit<H2Options, 'path'> {
  path: string
  observe?: { until?: string[], timeout?: number }
  derive?: (outcome: H2Outcome) => View
  /** Compare whether the server process still runs this long after the exchange. */
  checkAlive?: number
}

function http2 (id: string, spec: H2Spec, reference?: View, { fresh = false } = {}): Scenario {
  return {
    id,
    reference,
    fresh,
    async run (side, runId) {
      const outcome = await h2(side.h2port, { ...spec, path: side.prefix + withId(spec.path, runId) })
      const view: View = outcome.headAt === undefined ? { response: outcome.error ?? 'none' } : h2View(outcome, side)
      if (outcome.left) delete view.body
      if (spec.derive !== undefined) Object.assign(view, spec.derive(outcome))
      const { headAt, firstBodyAt, endAt, closedAt, rstCode, error, timedOut } = outcome
      const notes: View = { headAt, firstBodyAt, endAt, closedAt, rstCode, error, timedOut }
      if (spec.checkAlive !== undefined) {
        view.processAlive = await aliveAfter(side, spec.checkAlive)
        if (!side.alive()) notes.stderr = side.stderr().slice(-600)
      }
      if (spec.observe !== undefined) {
        const seen = await observed(side, runId, spec.observe.until, spec.observe.timeout ?? 0)
        view.observed = seen.facts
        notes.observedNotes = seen.notes
      }
      return { view, notes }
    }
  }
}

const chunk = (data: string | Buffer): string => {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data
  return bytes.length.toString(16) + '\r\n' + bytes.toString('latin1') + '\r\n'
}
const multipart = (boundary: string): string => [
  `--${boundary}`,
  'Content-Disposition: form-data; name="field"',
  '',
  'value ✓',
  `--${boundary}`,
  'Content-Disposition: form-data; name="file"; filename="a.txt"',
  'Content-Type: text/plain',
  '',
  'file body',
  `--${boundary}--`,
  ''
].join('\r\n')
const boundary = 'xYzZY0123'
const multipartType = `multipart/form-data; boundary=${boundary}`
const binary = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) & 255))

/** Sends the body's first part, then leaves after `ms`. */
const partialUpload = (first: string, ms = 60): Step[] => [{ send: first }, { wait: ms }, { leave: true }]

// ---------------------------------------------------------------------------
// The scenarios

const scenarios: Scenario[] = [
  // Every kind of body
  get('body-string', '/body/string'),
  get('body-string-utf8', '/body/string-utf8'),
  get('body-empty-string', '/body/empty-string'),
  get('body-uint8array', '/body/uint8array'),
  get('body-buffer', '/body/buffer'),
  get('body-arraybuffer', '/body/arraybuffer'),
  get('body-uint16array', '/body/uint16array'),
  get('body-dataview', '/body/dataview'),
  get('body-blob-typed', '/body/blob-typed'),
  get('body-blob-untyped', '/body/blob-untyped'),
  get('body-formdata', '/body/formdata'),
  get('body-formdata-file', '/body/formdata-file'),
  get('body-urlsearchparams', '/body/urlsearchparams'),
  get('body-readablestream', '/body/readablestream'),
  get('body-readablestream-typed', '/body/readablestream-typed'),
  get('body-readablestream-empty', '/body/readablestream-empty'),
  get('body-null', '/body/null'),
  get('body-null-typed', '/body/null-typed'),
  get('body-undefined', '/body/undefined'),
  get('body-large-string', '/body/large-string'),
  get('body-large-stream', '/body/large-stream'),
  get('c-text', '/c/text'),
  get('c-text-status-headers', '/c/text-status-headers'),
  get('c-json', '/c/json'),
  get('c-json-status', '/c/json-status'),
  get('c-html', '/c/html'),
  get('c-body', '/c/body'),
  get('c-body-bytes', '/c/body-bytes'),
  get('c-body-null-201', '/c/body-null-201'),
  get('c-redirect', '/c/redirect'),
  get('c-redirect-301', '/c/redirect-301'),
  get('c-not-found', '/c/not-found'),
  get('c-header-then-text', '/c/header-then-text'),
  get('route-unmatched', '/no/such/route'),
  get('response-json-static', '/static-method/json'),
  get('response-json-static-init', '/static-method/json-init'),
  get('response-redirect-static', '/static-method/redirect'),
  get('response-redirect-unnormalized', '/static-method/redirect-unnormalized'),
  get('content-length-shorter-than-body', '/headers/content-length-short'),

  // Statuses and headers
  get('status-204', '/status/204'),
  get('status-205', '/status/205'),
  get('status-304', '/status/304'),
  get('status-204-with-body', '/status/204-with-body'),
  get('status-599', '/status/599'),
  get('status-custom-text', '/status/custom-text'),
  get('status-custom-text-stream', '/status/custom-text-stream'),
  get('headers-set-cookie', '/headers/set-cookie'),
  get('headers-array-init', '/headers/array-init'),
  get('headers-app-content-length', '/headers/content-length'),
  get('headers-app-transfer-encoding', '/headers/transfer-encoding'),
  get('headers-vary', '/headers/vary'),
  get('headers-mixed-case', '/headers/mixed-case'),
  get('headers-after-body-stream', '/headers/after-body-stream'),
  get('headers-after-body-string', '/headers/after-body-string'),
  get('headers-after-body-unprepared', '/headers/after-body-unprepared'),
  get('globals-response-name', '/globals/response-name'),
  get('globals-instanceof', '/globals/instanceof'),
  get('globals-instanceof-across', '/globals/instanceof-across'),

  // HEAD
  get('head-text', '/c/text', { method: 'HEAD' }),
  get('head-json', '/c/json', { method: 'HEAD' }),
  get('head-null', '/body/null', { method: 'HEAD' }),
  get('head-stream-helper', '/stream/immediate', { method: 'HEAD' }),
  get('head-readablestream', '/body/readablestream', { method: 'HEAD' }),
  get('head-static', '/static/hello.txt', { method: 'HEAD' }),

  // Errors
  get('error-throw', '/error/throw'),
  get('error-throw-async', '/error/throw-async'),
  get('error-http-exception', '/error/http-exception'),
  get('error-reaches-server', '/reach-server/throw'),
  get('error-stream-before-first-chunk', '/error/stream-before-first-chunk'),
  get('error-stream-late-before-first-chunk', '/error/stream-late-before-first-chunk'),
  get('error-stream-mid', '/error/stream-mid'),
  get('error-stream-helper-throws', '/error/stream-helper-throws'),
  get('error-stream-string-chunk', '/error/stream-string-chunk'),

  // Streaming: content, and when the head and the chunks arrive
  get('stream-immediate', '/stream/immediate'),
  get('stream-text', '/stream/text'),
  get('stream-sse', '/stream/sse'),
  get('stream-pipe', '/stream/pipe'),
  get('stream-readable-slow', '/stream/readable-slow'),
  get('stream-late-first-chunk', '/stream/late-first-chunk?delay=1000', {
    derive: (o) => ({ headEarly: (o.headAt ?? Infinity) < 300, bodyLate: (o.firstBodyAt ?? 0) > 700 }),
    observe: { until: ['done'], timeout: 1000 }
  }, { headEarly: true, bodyLate: true }),
  get('stream-sse-late-first-event', '/stream/sse-late-first-event?delay=600', {
    derive: (o) => ({ headEarly: (o.headAt ?? Infinity) < 300, bodyLate: (o.firstBodyAt ?? 0) > 400 })
  }, { headEarly: true, bodyLate: true }),
  get('stream-late-second-chunk', '/stream/late-second-chunk', {
    derive: (o) => ({ firstChunkEarly: (o.firstBodyAt ?? Infinity) < 300, endLate: (o.completeAt ?? 0) > 400 })
  }, { firstChunkEarly: true, endLate: true }),

  // The client leaves at each stage
  get('disconnect-before-head', '/slow/text', { leave: 100, observe: { until: ['done'], timeout: 2000 } },
    { observed: { signalAbort: true, signalAborted: true, done: true } }),
  get('disconnect-before-stream-returned', '/slow/before-stream', { leave: 100, observe: { until: ['done', 'onAbort'], timeout: 1500 } }),
  get('disconnect-before-first-chunk', '/slow/stream-late-first-chunk', {
    leave: 300,
    derive: (o) => ({ headBeforeLeaving: o.headAt !== undefined }),
    observe: { until: ['done', 'onAbort'], timeout: 1500 }
  }, { headBeforeLeaving: true }),
  get('disconnect-mid-stream', '/stream/long', { leave: 'first-body', observe: { until: ['done', 'onAbort'], timeout: 2500 } },
    { observed: { onAbort: true, aborted: true, done: true } }),
  get('disconnect-mid-sse', '/stream/sse-long', { leave: 'first-body', observe: { until: ['done', 'onAbort'], timeout: 2500 } },
    { observed: { onAbort: true, aborted: true, done: true } }),
  get('disconnect-mid-readablestream', '/stream/readable-long', { leave: 'first-body', observe: { until: ['cancelled'], timeout: 2500 } },
    { observed: { cancelled: true } }),

  // Uploads
  h1('upload-content-length', { method: 'POST', path: '/upload/text', headers: { 'content-type': 'text/plain' }, body: 'uploaded ✓' }),
  h1('upload-chunked', {
    method: 'POST',
    path: '/upload/text',
    headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    steps: [{ send: chunk('one ') }, { wait: 30 }, { send: chunk('two ') }, { wait: 30 }, { send: chunk('three') + '0\r\n\r\n' }]
  }),
  h1('upload-binary', { method: 'POST', path: '/upload/bytes', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.concat(Array.from({ length: 200 }, () => binary)) }),
  h1('upload-large-chunked', {
    method: 'POST',
    path: '/upload/stream-count',
    headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
    steps: [...Array.from({ length: 8 }, (): Step => ({ send: chunk(Buffer.alloc(64 * 1024, 120)) })), { send: '0\r\n\r\n' }]
  }),
  h1('upload-empty-typed', { method: 'POST', path: '/upload/body-state', headers: { 'content-type': 'text/plain', 'content-length': '0' }, observe: {} }),
  h1('upload-content-length-0-untyped', { method: 'POST', path: '/upload/body-state', headers: { 'content-length': '0' }, observe: {} }),
  h1('upload-no-body-headers', { method: 'POST', path: '/upload/body-state', observe: {} }),
  h1('upload-chunked-empty', { method: 'POST', path: '/upload/body-state', headers: { 'transfer-encoding': 'chunked' }, body: '0\r\n\r\n', observe: {} }),
  h1('upload-stalled-unread', {
    method: 'POST',
    path: '/upload/ignore',
    keepAlive: true,
    headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    body: chunk('the start of a body that never ends'),
    closeWithin: 1500,
    derive: (o) => ({ closedSoon: o.closedAt !== undefined && o.completeAt !== undefined && o.closedAt - o.completeAt < 1200 })
  }, { closedSoon: true }),
  h1('upload-stalled-unread-content-length', {
    method: 'POST',
    path: '/upload/ignore',
    keepAlive: true,
    headers: { 'content-type': 'text/plain', 'content-length': '1000' },
    body: 'a tenth of the body',
    closeWithin: 1500,
    derive: (o) => ({ closedSoon: o.closedAt !== undefined && o.completeAt !== undefined && o.closedAt - o.completeAt < 1200 })
  }, { closedSoon: true }),
  h1('upload-stalled-read-then-leave', {
    method: 'POST',
    path: '/upload/read-slowly',
    headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    steps: partialUpload(chunk('half a body'), 150),
    observe: { until: ['done'], timeout: 2000 }
  }, { observed: { text: { outcome: 'rejected', error: 'Error' }, done: true } }),
  h1('upload-short-content-length-then-leave', {
    method: 'POST',
    path: '/upload/read-slowly',
    headers: { 'content-type': 'text/plain', 'content-length': '100' },
    steps: partialUpload('only ten b', 150),
    observe: { until: ['done'], timeout: 2000 }
  }),
  h1('upload-over-app-limit', { method: 'POST', path: '/upload/limited', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(4096) }),
  h1('upload-over-app-limit-chunked', {
    method: 'POST',
    path: '/upload/limited',
    headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    body: chunk('x'.repeat(2048)) + chunk('y'.repeat(2048)) + '0\r\n\r\n'
  }),
  h1('upload-under-app-limit', { method: 'POST', path: '/upload/limited', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1000) }),
  // The body follows the head a little later, as a client that waits for an
  // early answer sends it: the plugin answers 413 on the declared length and
  // closes, and a client still writing 1 MiB could lose that answer to EPIPE.
  h1('upload-over-fastify-limit', {
    method: 'POST',
    path: '/upload/stream-count',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(1024 * 1024 + 1) },
    steps: [{ wait: 100 }, { send: Buffer.alloc(1024 * 1024 + 1, 97) }]
  }),
  h1('upload-unread-then-next-request', {
    method: 'POST',
    path: '/upload/ignore',
    headers: { 'content-type': 'text/plain' },
    body: 'a body nobody reads',
    then: [{ method: 'GET', path: '/c/text' }]
  }),
  h1('upload-unread-streamed-response', {
    method: 'POST',
    path: '/upload/ignore-stream',
    headers: { 'content-type': 'application/octet-stream' },
    body: Buffer.alloc(256 * 1024, 99),
    observe: { until: ['done'], timeout: 2000 }
  }),
  h1('upload-expect-continue', {
    method: 'POST',
    path: '/upload/text',
    headers: { 'content-type': 'text/plain', 'content-length': '12', expect: '100-continue' },
    steps: [{ wait: 100 }, { send: 'after a 100?' }]
  }),
  h1('upload-put', { method: 'PUT', path: '/upload/text', headers: { 'content-type': 'text/plain' }, body: 'put body' }),
  h1('upload-patch', { method: 'PATCH', path: '/upload/text', headers: { 'content-type': 'application/json' }, body: '{"patch":1}' }),
  h1('upload-delete-with-body', { method: 'DELETE', path: '/upload/text', headers: { 'content-type': 'text/plain' }, body: 'delete body' }),
  h1('upload-get-with-body', { method: 'GET', path: '/echo/request', headers: { 'content-type': 'text/plain' }, body: 'ignored' }),
  h1('upload-invalid-content-type', { method: 'POST', path: '/upload/text', headers: { 'content-type': 'not a media type' }, body: 'typed oddly' }),

  // Body read methods
  h1('read-text', { method: 'POST', path: '/read/text', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'some text ✓' }),
  h1('read-text-chunked', {
    method: 'POST',
    path: '/read/text',
    headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
    steps: [{ send: chunk('in ') }, { wait: 20 }, { send: chunk('parts') + '0\r\n\r\n' }]
  }),
  h1('read-json', { method: 'POST', path: '/read/json', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2],"b":"✓"}' }),
  h1('read-json-invalid', { method: 'POST', path: '/read/json', headers: { 'content-type': 'application/json' }, body: '{nope' }),
  h1('read-json-empty', { method: 'POST', path: '/read/json', headers: { 'content-type': 'application/json', 'content-length': '0' } }),
  h1('read-arraybuffer', { method: 'POST', path: '/read/arrayBuffer', headers: { 'content-type': 'application/octet-stream' }, body: binary }),
  h1('read-blob', { method: 'POST', path: '/read/blob', headers: { 'content-type': 'image/png' }, body: binary }),
  h1('read-bytes', { method: 'POST', path: '/read/bytes', headers: { 'content-type': 'application/octet-stream' }, body: 'some bytes' }),
  h1('read-blob-untyped', { method: 'POST', path: '/read/blob', headers: { 'content-length': '5' }, body: 'bytes' }),
  h1('read-formdata-multipart', { method: 'POST', path: '/read/formData', headers: { 'content-type': multipartType }, body: multipart(boundary) }),
  h1('read-formdata-urlencoded', { method: 'POST', path: '/read/formData', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=two+words&a=3' }),
  h1('read-formdata-wrong-type', { method: 'POST', path: '/read/formData', headers: { 'content-type': 'text/plain' }, body: 'a=1' }),
  h1('read-parsebody-multipart', { method: 'POST', path: '/read/parse-body', headers: { 'content-type': multipartType }, body: multipart(boundary) }),
  h1('read-parsebody-urlencoded', { method: 'POST', path: '/read/parse-body', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'x=1&x=2&y=%E2%9C%93' }),
  h1('read-parsebody-json', { method: 'POST', path: '/read/parse-body', headers: { 'content-type': 'application/json' }, body: '{"not":"a form"}' }),
  h1('read-hono-json-then-text', { method: 'POST', path: '/read/hono-json-then-text', headers: { 'content-type': 'application/json' }, body: '{"cached":true}' }),
  h1('read-twice', { method: 'POST', path: '/read/twice', headers: { 'content-type': 'text/plain' }, body: 'once only' }),
  h1('read-text-then-json', { method: 'POST', path: '/read/text-then-json', headers: { 'content-type': 'application/json' }, body: '{"a":1}' }),
  h1('read-locked', { method: 'POST', path: '/read/locked', headers: { 'content-type': 'text/plain' }, body: 'locked' }),
  h1('read-clone', { method: 'POST', path: '/read/clone', headers: { 'content-type': 'text/plain' }, body: 'cloned body' }),
  h1('read-new-request', { method: 'POST', path: '/read/new-request', headers: { 'content-type': 'text/plain' }, body: 'through new Request()' }),

  // The client sends the whole body and leaves; the handler reads it once its signal says so
  ...(['text', 'json', 'arrayBuffer', 'blob', 'formData'] as const).map((name) => h1(`read-after-leave-${name.toLowerCase()}`, {
    method: 'POST',
    path: `/read-after-leave/${name}`,
    headers: { 'content-type': name === 'formData' ? 'application/x-www-form-urlencoded' : name === 'json' ? 'application/json' : 'text/plain' },
    body: name === 'formData' ? 'left=1&gone=yes' : name === 'json' ? '{"left":true}' : 'a body sent in full',
    steps: [{ wait: 40 }, { leave: true }],
    observe: { until: ['done'], timeout: 3000 }
  }, { observed: { signalAborted: true, [name]: { outcome: 'resolved' }, done: true } })),
  h1('read-after-leave-stream', {
    method: 'POST',
    path: '/read-after-leave/stream',
    headers: { 'content-type': 'text/plain' },
    body: 'read as a stream after the client left',
    steps: [{ wait: 40 }, { leave: true }],
    observe: { until: ['done'], timeout: 3000 }
  }, { observed: { signalAborted: true, read: { outcome: 'done', bytes: 38 }, done: true } }),
  h1('read-after-leave-partial', {
    method: 'POST',
    path: '/read-after-leave/text',
    headers: { 'content-type': 'text/plain', 'content-length': '100' },
    body: 'ten bytes.',
    steps: [{ wait: 40 }, { leave: true }],
    observe: { until: ['done'], timeout: 3000 }
  }, { observed: { signalAborted: true, text: { outcome: 'rejected' }, done: true } }),

  // serveStatic from @hono/node-server/serve-static
  get('static-file', '/static/hello.txt'),
  get('static-json', '/static/data.json'),
  get('static-binary', '/static/blob.bin'),
  get('static-range', '/static/hello.txt', { headers: { range: 'bytes=6-9' } }),
  get('static-range-suffix', '/static/blob.bin', { headers: { range: 'bytes=-100' } }),
  get('static-range-unsatisfiable', '/static/hello.txt', { headers: { range: 'bytes=999-' } }),
  get('static-missing', '/static/nope.txt'),
  get('static-directory-index', '/static/docs/'),
  get('static-encoded-traversal', '/static/%2e%2e/apps.mjs'),
  get('static-percent-path', '/static/hello%2Etxt'),
  get('static-on-found', '/cached/hello.txt'),
  get('static-on-found-head', '/cached/hello.txt', { method: 'HEAD' }),
  get('static-on-found-range', '/cached/blob.bin', { headers: { range: 'bytes=0-9' } }),

  // The connection and the request as the app sees it
  get('conninfo', '/conninfo'),
  get('request-query', '/echo/request?a=1&a=2&b=%20x&c'),
  get('request-encoded-param', '/echo/param/caf%C3%A9%20x'),
  get('request-headers', '/echo/request', { headers: { 'x-dup': 'a', 'X-Dup': 'b', cookie: 'a=1', 'x-empty': '', 'x-spaces': '  padded  ' } }),
  get('request-dot-segments', '', { path: (prefix, id) => `${prefix}/x/../echo/request?id=${id}` }),
  get('request-backslash-path', '', { path: (prefix, id) => `${prefix}/x\\..\\echo/request?id=${id}` }),
  get('request-backslash-query', '', { path: (prefix, id) => `${prefix}/echo/request?id=${id}&q=a\\..\\b` }),
  get('request-host-uppercase', '/echo/request', { headers: { host: 'LOCALHOST:80' } }),
  get('request-absolute-form-https', '', { path: (prefix, id) => `https://elsewhere.test${prefix}/echo/request?id=${id}` }),
  get('request-bad-percent', '', { path: (prefix) => `${prefix}/echo/param/%zz` }),
  get('request-http10-no-host', '/echo/request', { version: '1.0', headers: { host: undefined } }),
  get('request-empty-host', '/echo/request', { headers: { host: '' } }),
  h1('method-query-typed', { method: 'QUERY', path: '/upload/text', headers: { 'content-type': 'text/plain' }, body: 'select *' }),
  h1('method-query-untyped', { method: 'QUERY', path: '/upload/text', body: 'select *' }),
  h1('method-options', { method: 'OPTIONS', path: '/echo/request' }),
  h1('method-trace', { method: 'TRACE', path: '/echo/request' }),
  h1('method-purge', { method: 'PURGE', path: '/echo/request' }),
  h1('read-trace-text', { method: 'TRACE', path: '/read/text' }),
  h1('read-trace-blob', { method: 'TRACE', path: '/read/blob' }),
  h1('read-trace-formdata', { method: 'TRACE', path: '/read/formData' }),

  // HTTP/1.0, pipelining, keep-alive
  get('http10-text', '/c/text', { version: '1.0' }),
  get('http10-stream', '/stream/immediate', { version: '1.0' }),
  get('http10-readablestream', '/body/readablestream', { version: '1.0' }),
  get('pipelined-gets', '/c/text', { then: [{ method: 'GET', path: '/c/json' }, { method: 'GET', path: '/c/html' }] }),
  get('keep-alive-after-stream', '/stream/sse', { then: [{ method: 'GET', path: '/c/text' }] }),
  h1('keep-alive-after-upload', { method: 'POST', path: '/upload/text', headers: { 'content-type': 'text/plain' }, body: 'first', then: [{ method: 'GET', path: '/c/json' }] }),

  // Responses from another fetch implementation
  get('foreign-undici-text', '/foreign/undici-text'),
  get('foreign-undici-stream', '/foreign/undici-stream'),
  get('foreign-shaped', '/foreign/shaped'),
  get('foreign-shaped-null', '/foreign/shaped-null'),

  // HTTP/2 (cleartext)
  http2('h2-text', { path: '/c/text' }),
  http2('h2-json', { path: '/c/json' }),
  http2('h2-set-cookie', { path: '/headers/set-cookie' }),
  http2('h2-stream', { path: '/stream/immediate' }),
  http2('h2-readablestream-empty', { path: '/body/readablestream-empty' }),
  http2('h2-head', { method: 'HEAD', path: '/c/text' }),
  http2('h2-static', { path: '/static/hello.txt' }),
  http2('h2-post-echo', { method: 'POST', path: '/upload/text', headers: { 'content-type': 'text/plain' }, body: 'over h2 ✓' }),
  http2('h2-post-no-body', { method: 'POST', path: '/upload/body-state', observe: {} }),
  http2('h2-unread-body', {
    method: 'POST',
    path: '/upload/ignore',
    headers: { 'content-type': 'application/octet-stream' },
    body: Buffer.alloc(256 * 1024, 98),
    closeWithin: 1500,
    derive: (o) => ({ streamClosedSoon: o.closedAt !== undefined && o.endAt !== undefined && o.closedAt - o.endAt < 1200 })
  }, { streamClosedSoon: true }),
  http2('h2-unread-body-streamed-response', {
    method: 'POST',
    path: '/upload/ignore-stream',
    headers: { 'content-type': 'application/octet-stream' },
    body: Buffer.alloc(256 * 1024, 99),
    closeWithin: 1500,
    derive: (o) => ({ streamClosedSoon: o.closedAt !== undefined && o.endAt !== undefined && o.closedAt - o.endAt < 1200 }),
    observe: { until: ['done'], timeout: 2000 }
  }, { streamClosedSoon: true }),
  http2('h2-stalled-unread', {
    method: 'POST',
    path: '/upload/ignore',
    headers: { 'content-type': 'text/plain' },
    body: 'the start of a body that never ends',
    keepOpen: true,
    closeWithin: 1500,
    derive: (o) => ({ streamClosedSoon: o.closedAt !== undefined && o.endAt !== undefined && o.closedAt - o.endAt < 1200 })
  }, { streamClosedSoon: true }),
  http2('h2-late-first-chunk', {
    path: '/stream/late-first-chunk?delay=1000',
    derive: (o) => ({ headEarly: (o.headAt ?? Infinity) < 300, bodyLate: (o.firstBodyAt ?? 0) > 700 })
  }, { headEarly: true, bodyLate: true }),
  http2('h2-disconnect-mid-stream', { path: '/stream/long', leave: 'first-body', observe: { until: ['done', 'onAbort'], timeout: 2500 } },
    { observed: { onAbort: true, aborted: true, done: true } }),
  http2('h2-conninfo', { path: '/conninfo' }),
  http2('h2-scheme-https', { path: '/echo/request', headers: { ':scheme': 'https' } }),
  http2('h2-sse', { path: '/stream/sse', checkAlive: 300 }, { processAlive: false }, { fresh: true }),
  http2('h2-read-formdata', { method: 'POST', path: '/read/formData', headers: { 'content-type': multipartType }, body: multipart(boundary) })
]

// ---------------------------------------------------------------------------

/** The reference's values for the keys in `expected`, for pinning node-server's behaviour. */
function pick (view: View, expected: View): View {
  const out: View = {}
  for (const key of Object.keys(expected)) {
    const value = view[key]
    const wanted = expected[key]
    out[key] = wanted !== null && typeof wanted === 'object' && value !== null && typeof value === 'object' && !Array.isArray(wanted)
      ? pick(value as View, wanted as View)
      : value
  }
  return out
}

test('differential: fastify-hono against @hono/node-server', { skip: referenceUnavailable() }, async (t) => {
  const ids = new Set<string>()
  for (const scenario of scenarios) {
    if (ids.has(scenario.id)) throw new Error(`duplicate scenario id ${scenario.id}`)
    ids.add(scenario.id)
  }
  for (const id of pendingReasons.keys()) if (!ids.has(id)) throw new Error(`pending.mjs names ${id}, which is no scenario`)
  const byScenario = new Map<string, Difference[]>()
  for (const difference of intended) {
    for (const id of difference.scenarios) {
      if (!ids.has(id)) throw new Error(`differences.mjs: ${difference.id} names ${id}, which is no scenario`)
      byScenario.set(id, [...(byScenario.get(id) ?? []), difference])
    }
  }
  t.comment(`${scenarios.length} scenarios; ${pendingReasons.size} pending; headers never compared: ${ignoredHeadersReason as string}`)

  const [reference, plugin] = await Promise.all([startSide('node-server'), startSide('plugin')])
  t.teardown(() => Promise.all([reference.close(), plugin.close()]))

  for (const scenario of scenarios) {
    const todo = allLive ? false : pendingReasons.get(scenario.id) ?? false
    // A pending scenario runs, and its assertions are tap `todo`s: reported, not failing the suite.
    await t.test(scenario.id, async (t) => {
      let failed = false
      const todoOption = todo === false ? {} : { todo }
      // tap answers true for a todo assertion that fails: tell for ourselves.
      const assert: Asserter = {
        ok: (value, message, extra = {}) => {
          failed ||= !value
          return t.ok(value, message, { ...extra, ...todoOption })
        },
        strictSame: (actual, expected, message, extra = {}) => {
          failed ||= !isDeepStrictEqual(actual, expected)
          return t.strictSame(actual, expected, message, { ...extra, ...todoOption })
        }
      }
      let referenceSide: Side = reference
      if (scenario.fresh === true) {
        const fresh = await startSide('node-server')
        t.teardown(() => fresh.close())
        referenceSide = fresh
      }
      const [ref, got] = await Promise.all([scenario.run(referenceSide, scenario.id), scenario.run(plugin, scenario.id)])
      // A fresh object per assertion: tap adds the diff to the one it is given.
      const extra = (): View => ({ reference: ref.notes, plugin: got.notes })
      if (scenario.reference !== undefined) {
        assert.strictSame(pick(ref.view, scenario.reference), scenario.reference, 'the reference behaves as pinned', extra())
      }
      const explained = byScenario.get(scenario.id) ?? []
      const skipped = new Set(explained.flatMap((difference) => difference.fields(scenario.id)))
      const keys = new Set([...Object.keys(ref.view), ...Object.keys(got.view)])
      for (const key of keys) {
        if (skipped.has(key)) continue
        assert.strictSame(got.view[key], ref.view[key], `${key} as @hono/node-server`, extra())
      }
      for (const difference of explained) {
        t.comment(`intended difference ${difference.id}: ${difference.reason}`)
        difference.assert(assert, ref.view, got.view, scenario.id)
      }
      if (todo !== false && !failed) t.comment(`${scenario.id} passes now: remove it from pending.mjs`)
      if (reportFile !== undefined) {
        const mismatched = [...keys].filter((key) => !isDeepStrictEqual(got.view[key], ref.view[key]))
        appendFileSync(reportFile, JSON.stringify({ id: scenario.id, explained: [...skipped], mismatched, reference: ref, plugin: got }) + '\n')
      }
    })
  }
})
