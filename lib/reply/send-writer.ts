import { Buffer } from 'node:buffer'
import { validateHeaderName, validateHeaderValue } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { OnSendHook } from '../internals/fastify.js'
import { canChunk, isHttp2 } from '../internals/node.js'
import { defaultTypeOf, isNullBodyStatus, type ResponseParts } from '../web/response.js'
import { readNext, type StartedBody } from './complete-body.js'
import { mergeHeaders, mergeThroughReply, type Merge } from './head.js'
import { afterOnSendHooks } from './on-send.js'
import { isCustomStatusText, isHttp2Forbidden, type Plan } from './plan.js'
import { trackStream } from '../shutdown.js'

/**
 * The ways out through Fastify's semantics, `after onSend hooks` and
 * `reply.send`. The reply is prepared as reply.send prepares it: the
 * status, the app's headers merged over those Fastify hooks set (head.ts:
 * the app wins, Set-Cookie and Vary combine), a default Content-Type, and
 * the payload (a string, a Buffer, a stream, or nothing). Then reply.send
 * writes it, or, where the route has onSend hooks the plugin can run, the
 * plugin runs them and writes what they hand back (on-send.ts); an error
 * a hook raises finds the app's headers taken back off the reply.
 * - `after onSend hooks`: a stored body whose headers the plan checked; the
 *   app's headers go straight into the reply's own record.
 * - `reply.send`: every response a guard of the plan refused, with the
 *   whole of Fastify's writer (HTTP/2, trailers, its framing). Its headers
 *   are checked here, before any reaches the reply, and set through
 *   reply.header(), so nothing here relies on Fastify's internals. Bodies
 *   go out as a Buffer, so Fastify sets their Content-Length (a string
 *   would get a charset appended to JSON types); with the app's
 *   Transfer-Encoding or Trailer, as a stream.
 *
 * An error answer never carries the failed response's headers (its
 * caching, validators, encoding, cookies, length): a stream that has failed
 * already rejected before the plan, and one that fails before its first
 * chunk takes them back off the reply and the raw response before
 * Fastify's error handler writes the 500. After the first chunk, Fastify
 * destroys the connection.
 *
 * Returns undefined when the plugin wrote the response (the reply is
 * hijacked), the reply (a thenable that settles when Fastify's writer is
 * done), a promise of it while onSend hooks are at work, or throws for
 * Fastify's error handler.
 */
export function writeThroughFastify (
  plan: Plan,
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  /** The status, headers and stored body (a lightweight one, or a native body read whole). */
  parts: ResponseParts,
  /** A native live stream, its ready part read already. */
  started: StartedBody | undefined,
  hooks: readonly OnSendHook[] | null | undefined
): FastifyReply | Promise<FastifyReply> | undefined {
  const status = plan.status
  const stored = isNullBodyStatus(status) ? null : parts.body
  const withHooks = hooks !== null && hooks !== undefined
  let payload: string | Buffer | ReadableStream<Uint8Array> | undefined
  let reason = ''
  /** For `reply.send`: the app's headers as a list to set, and its live stream, once read from. */
  let list: string[] | undefined
  let live: StartedBody | undefined
  let defaultType = plan.defaultType
  if (plan.way === 'reply.send') {
    const headers = response.headers
    const http2 = isHttp2(request.raw)
    // Transfer-Encoding or a Trailer announced by the app: no length may be
    // added, so the body goes out as a stream, chunked (HTTP/1) or as data
    // frames. An HTTP/1.0 client cannot take chunks, hence no trailers: Node
    // would throw on the Trailer header, so it is left out there.
    let framed = headers.has('transfer-encoding') || headers.has('trailer')
    const dropTrailer = !http2 && framed && !canChunk(reply.raw) && !headers.has('transfer-encoding')
    if (dropTrailer) framed = false
    list = writableHeaders(headers, http2, dropTrailer)
    if (started !== undefined) {
      live = started
      payload = streamOfStarted(started, () => { takeBack(reply, merge) })
      trackStream(reply, started) // fastify.close(): ended, or given until the close bound
    } else if (stored !== null) {
      // A stored body, without building a stream unless framing needs one; a
      // string only for the hooks the plugin runs, as a Fastify route's
      // reply.send gives them.
      if (typeof stored === 'string' && !framed && withHooks) payload = stored
      else {
        const bytes = typeof stored === 'string' ? Buffer.from(stored) : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
        payload = framed ? streamOfBytes(bytes) : bytes
      }
      // A string's type as a Fastify route's reply.send sets it; before the
      // hooks the plugin runs, a Buffer's too (reply.send gives it its
      // default type before its hooks, and on its own without them).
      if (typeof stored === 'string' || (withHooks && !framed)) defaultType = defaultTypeOf(stored)
    }
    // A custom reason phrase (Response's statusText) is kept on HTTP/1; HTTP/2 has none.
    const statusText = response.statusText
    if (!http2 && isCustomStatusText(status, statusText)) reason = statusText
  } else if (stored !== null) {
    payload = typeof stored === 'string' ? stored : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
  }

  const merge = list === undefined
    ? mergeHeaders(plan.head as Record<string, string | string[]>, plan.merge!, defaultType, plan.length, true)
    : mergeThroughReply(reply, list, defaultType, plan.length, withHooks)
  reply.code(status)
  if (reason !== '') reply.raw.statusMessage = reason
  if (!withHooks) {
    // way-out.ts wrote the debug line.
    try {
      return reply.send(payload)
    } catch (err) {
      reply.raw.statusMessage = ''
      merge.undo()
      throw err
    }
  }
  const restore = (): void => {
    if (reason !== '') reply.raw.statusMessage = ''
    merge.undo()
    live?.reader.cancel().catch(() => {})
  }
  return afterOnSendHooks(hooks, reply, payload, restore, live, plan.reason)
}

/**
 * For reply.send: the app's headers as a flat list of names and values,
 * each checked before any of them reaches the reply, so a value that
 * `Headers` accepts but Node rejects (`'a\x01b'`) fails here, with nothing
 * half-written, and Fastify's error handler answers 500. Those HTTP/2
 * forbids are left out there, and the Trailer where it cannot be sent.
 */
function writableHeaders (headers: Headers, http2: boolean, dropTrailer: boolean): string[] {
  const list: string[] = []
  for (const [name, value] of headers) {
    validateHeaderName(name)
    validateHeaderValue(name, value)
    if (http2 && isHttp2Forbidden(name)) continue
    if (dropTrailer && name === 'trailer') continue
    list.push(name, value)
  }
  return list
}

/**
 * The body failed before its first chunk, and reply.send has not written the
 * head: the app's headers come off the reply and off the raw response (where
 * Fastify's stream pump copied them), what Fastify hooks had set goes back,
 * and so does the standard reason phrase.
 */
function takeBack (reply: FastifyReply, merge: Merge | undefined): void {
  const raw = reply.raw
  if (raw.headersSent) return
  merge?.undo()
  if (!isHttp2(raw)) (raw as { statusMessage?: string }).statusMessage = undefined
}

function streamOfBytes (bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({ start (controller) { controller.enqueue(bytes); controller.close() } })
}

/**
 * A started body as a ReadableStream again, for reply.send. `failedBeforeFirstChunk`
 * runs if the body fails before it gave anything.
 */
function streamOfStarted (body: StartedBody, failedBeforeFirstChunk: () => void): ReadableStream<Uint8Array> {
  let gave = false
  return new ReadableStream<Uint8Array>({
    async pull (controller) {
      let result: ReadableStreamReadResult<Uint8Array>
      try {
        result = await readNext(body)
      } catch (err) {
        if (!gave) failedBeforeFirstChunk()
        throw err
      }
      gave = true
      if (result.done) controller.close()
      else {
        body.sent += result.value.byteLength
        controller.enqueue(result.value)
      }
    },
    cancel (reason) {
      return body.reader.cancel(reason)
    }
  }, { highWaterMark: 0 })
}
