import { Buffer } from 'node:buffer'
import { validateHeaderName, validateHeaderValue } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { onSendHooks, replyHeaders, setReplyHeaders, type OnSendHook } from '../internals/fastify.js'
import { canChunk, isHttp2 } from '../internals/node.js'
import { defaultTypeOf, isNullBodyStatus, type ResponseParts } from '../web/response.js'
import { readNext, type StartedBody } from './complete-body.js'
import { afterOnSendHooks, writeAfterHooksOnSend } from './on-send.js'
import { trackStream } from '../shutdown.js'
import { combineVary } from './head.js'
import { isCustomStatusText, isHttp2Forbidden } from './plan.js'
import type { SendReason } from './reasons.js'

/**
 * The way out `reply.send`: the app's Response through Fastify's own writer,
 * where every onSend hook, HTTP/2, trailers and Fastify's own framing apply.
 * Taken whenever a guard of the plan fails. Buffered bodies go out as a
 * Buffer, so Fastify sets their Content-Length (a string would also get a
 * charset appended to JSON types).
 *
 * An error answer never carries the failed response's headers (its caching,
 * validators, encoding, cookies, length): a stream that has failed already
 * rejected before the plan, and one that fails before its first chunk takes
 * them back off the reply and the raw response before Fastify's error
 * handler writes the 500. After the first chunk, Fastify destroys the
 * connection.
 */
export async function writeThroughReply (
  /** The guard that sent the response here, for the debug log. */
  guard: SendReason,
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  /** The status, headers and stored body (a lightweight one, or a native body read whole). */
  parts: ResponseParts,
  /** A native live stream, its ready part read already. */
  started: StartedBody | undefined,
  /** For a HEAD answer made from a GET response, the GET body's length (the plan's). */
  headLength: number | undefined
): Promise<FastifyReply> {
  const status = response.status
  const headers = response.headers
  assertWritableHeaders(headers)
  const http2 = isHttp2(request.raw)
  // Transfer-Encoding or a Trailer announced by the app: no length may be
  // added, so the body goes out as a stream, chunked (HTTP/1) or as data frames.
  // An HTTP/1.0 client cannot take chunks, hence no trailers: Node would throw
  // on the Trailer header, so it is dropped there.
  let framed = headers.has('transfer-encoding') || headers.has('trailer')
  const dropTrailer = !http2 && framed && !canChunk(reply.raw) && !headers.has('transfer-encoding')
  if (dropTrailer) framed = false

  const hooks = onSendHooks(reply)
  let payload: string | Buffer | ReadableStream<Uint8Array> | undefined
  /** The app's live stream, once read from, behind `payload`. */
  let live: StartedBody | undefined
  // What the reply held before the app's headers, to go back to if a stream fails before its first chunk.
  let before: Record<string, unknown> | undefined
  const stored = parts.body
  if (started !== undefined) {
    live = started
    payload = streamOfStarted(started, () => takeBackHeaders(reply, headers, before))
    trackStream(reply, started.reader) // ended by fastify.close()
  } else if (stored !== null && !isNullBodyStatus(status)) {
    // A stored body, without building a stream unless framing needs one.
    // A kept Headers object has no default type: the one the fast writer adds.
    if (typeof stored === 'string' && !reply.hasHeader('content-type')) reply.header('content-type', defaultTypeOf(stored))
    if (typeof stored === 'string' && !framed && hooks !== null && hooks !== undefined) {
      // For the hooks the plugin runs, a string, as a Fastify route's reply.send gives them.
      payload = stored
    } else {
      const bytes = typeof stored === 'string' ? Buffer.from(stored) : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)
      payload = framed ? streamOfBytes(bytes) : bytes
    }
  }

  if (live !== undefined) before = reply.getHeaders()
  // With onSend hooks, run here: the reply's headers before the app's, to go back to if a hook fails.
  const own = hooks === null || hooks === undefined ? undefined : { ...replyHeaders(reply) }
  reply.code(status)
  copyHeadersToReply(reply, headers, http2)
  if (dropTrailer) reply.removeHeader('trailer')
  if (headLength !== undefined) reply.header('content-length', String(headLength))

  // A custom reason phrase (Response's statusText) is kept on HTTP/1;
  // HTTP/2 has none.
  const statusText = response.statusText
  const reason = !http2 && isCustomStatusText(status, statusText) ? statusText : ''
  return send(reply, payload, reason, guard, hooks, own, live)
}

/**
 * The body failed before its first chunk, and reply.send has not written the
 * head: the app's headers come off the reply and off the raw response (where
 * Fastify's stream pump copied them), what Fastify hooks had set goes back,
 * and so does the standard reason phrase.
 */
function takeBackHeaders (reply: FastifyReply, headers: Headers, before: Record<string, unknown> | undefined): void {
  const raw = reply.raw
  if (raw.headersSent) return
  for (const name of headers.keys()) {
    reply.removeHeader(name)
    raw.removeHeader(name)
    const previous = before?.[name]
    if (previous !== undefined) reply.header(name, previous)
  }
  if (!isHttp2(raw)) (raw as { statusMessage?: string }).statusMessage = undefined
}

/**
 * reply.send, or with onSend hooks in scope, the hooks run here and the
 * payload they hand back written as Fastify would (on-send.ts): an error a
 * hook raises then finds the reply's headers as they were before the app's
 * response, and Fastify's error handler answers without them (the app's
 * stream, if any, is cancelled). Before its hooks, reply.send gives a Buffer
 * without a type Fastify's default one; the other payloads passed here (a
 * string, given its type above, a web stream, undefined) it hands over as
 * they are. A live stream that
 * only onSend hooks kept off the stream writer, and that they hand back
 * untouched, goes out through the stream writer after all.
 */
function send (
  reply: FastifyReply,
  payload: string | Buffer | ReadableStream<Uint8Array> | undefined,
  reason: string,
  guard: SendReason,
  hooks: readonly OnSendHook[] | null | undefined,
  own: Record<string, string | string[]> | undefined,
  live: StartedBody | undefined
): FastifyReply | Promise<FastifyReply> {
  if (reason !== '') reply.raw.statusMessage = reason
  if (hooks === null || hooks === undefined || own === undefined) {
    // way-out.ts wrote the debug line.
    try {
      return reply.send(payload)
    } catch (err) {
      reply.raw.statusMessage = ''
      throw err
    }
  }
  if (Buffer.isBuffer(payload) && !reply.hasHeader('content-type')) reply.header('content-type', defaultTypeOf(payload))
  const restore = (): void => {
    if (reason !== '') reply.raw.statusMessage = ''
    setReplyHeaders(reply, own)
    live?.reader.cancel().catch(() => {})
  }
  const result = afterOnSendHooks(hooks, reply, payload, restore, guard, (final) => writeAfterHooksOnSend(reply, final, payload, live, guard, restore))
  // Written by the plugin: the reply is hijacked, and the caller (an async function) returns it.
  return result ?? reply
}

function streamOfBytes (bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({ start (controller) { controller.enqueue(bytes); controller.close() } })
}

/**
 * For reply.send: checks every header the app set before any of them reaches
 * the reply, so a value that `Headers` accepts but Node rejects (`'a\x01b'`)
 * fails here, with nothing half-written, and Fastify's error handler answers 500.
 */
function assertWritableHeaders (headers: Headers): void {
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
function copyHeadersToReply (reply: FastifyReply, headers: Headers, http2: boolean): void {
  for (const [name, value] of headers) {
    if (http2 && isHttp2Forbidden(name)) continue
    if (name === 'vary') {
      const existing = reply.getHeader('vary')
      reply.header('vary', existing === undefined ? value : combineVary(String(existing), value))
      continue
    }
    reply.header(name, value)
  }
}

/**
 * A started body as a ReadableStream again, for reply.send. `failedBeforeFirstChunk`
 * runs if the body fails before it gave anything.
 */
function streamOfStarted (body: StartedBody, failedBeforeFirstChunk?: () => void): ReadableStream<Uint8Array> {
  let gave = false
  return new ReadableStream<Uint8Array>({
    async pull (controller) {
      let result: ReadableStreamReadResult<Uint8Array>
      try {
        result = await readNext(body)
      } catch (err) {
        if (!gave) failedBeforeFirstChunk?.()
        throw err
      }
      gave = true
      if (result.done) controller.close()
      else controller.enqueue(result.value)
    },
    cancel (reason) {
      return body.reader.cancel(reason)
    }
  }, { highWaterMark: 0 })
}
