import { Buffer } from 'node:buffer'
import { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { onSendHooks, responseBodyConsumed, type OnSendHook } from '../internals/fastify.js'
import { canChunk, hasRawHeaders } from '../internals/node.js'
import { claimBody, DEFAULT_TEXT_TYPE, isNullBodyStatus, responseParts, type ResponseParts } from '../web/response.js'
import { bufferIfComplete, readAvailable, type StartedBody } from './complete-body.js'
import { writeFast } from './fast-writer.js'
import { http2Head, isCustomStatusText, mergeInPlace, mergeIntoReply, outgoingHeaders, undoMerge } from './head.js'
import { afterOnSendHooks, finishAfterOnSend } from './on-send.js'
import type { SendReason } from './reasons.js'
import { wentOut } from './went-out.js'
import { writeThroughReply } from './send-writer.js'
import { writeStream } from './stream-writer.js'

/**
 * The one place that decides how the app's Response goes out:
 * - the fast writer: a stored body (a lightweight Response nobody
 *   materialized, or a native body that turned out to be complete), one
 *   writeHead and one end on the raw HTTP/1 response, Node writing the length;
 * - the stream writer: a native body that is a live stream, piped to the raw
 *   HTTP/1 response with backpressure;
 * - `reply.send`, whenever a guard fails; the guard names itself (SendReason).
 * Each guard is checked once, here or in outgoingHeaders. Returns undefined
 * when one of our writers sent the response (the handler then returns nothing
 * to Fastify, as a hijacked route does), or a promise.
 */
export function writeResponse (request: FastifyRequest, reply: FastifyReply, response: Response): FastifyReply | Promise<FastifyReply | undefined> | undefined {
  const parts = responseParts(response)
  if (writtenByTheApp(response, parts)) {
    // The app wrote to c.env.outgoing itself: the reply is the app's, and
    // Fastify's onResponse hooks and log run when it finishes.
    wentOut(reply, 'the app itself')
    reply.hijack()
    return undefined
  }
  const hooks = onSendHooks(reply)
  if (parts === undefined) {
    if (response.bodyUsed) throw responseBodyConsumed()
    const refused = replyGuard(reply, hooks, true)
    if (refused !== undefined) return viaReply(refused, request, reply, response, undefined)
    return writeNative(request, reply, response, hooks)
  }
  // A body shared with copies (or this same response sent before) goes out once.
  if (parts.body !== null && !claimBody(response)) throw responseBodyConsumed()
  return writeStored(request, reply, response, parts, hooks, replyGuard(reply, hooks, false))
}

/**
 * A stored body (a lightweight Response's, or a native body read whole): the
 * fast writer, unless `refused` or a header guard sends it to reply.send.
 * With onSend hooks, they run first (writeStoredAfterHooks).
 */
function writeStored (
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  parts: ResponseParts,
  hooks: readonly OnSendHook[] | null | undefined,
  refused: SendReason | undefined
): FastifyReply | Promise<FastifyReply> | undefined {
  if (refused === undefined && hooks !== null && hooks !== undefined) return writeStoredAfterHooks(request, reply, response, parts, hooks)
  const head = refused ?? outgoingHeaders(reply, parts, false)
  if (typeof head === 'string') return viaReply(head, request, reply, response, parts)
  wentOut(reply, 'fast writer')
  writeFast(reply, parts, head, request.raw.method ?? 'GET')
  return undefined
}

/**
 * A stored body with onSend hooks in scope, prepared as reply.send would
 * prepare it, at less cost: the app's headers merged into the reply's own
 * header record (so the hooks see and change them through reply.header()
 * and getHeader()), the status set with reply.code(), a text body as the
 * string a Fastify route's reply.send gives its hooks and bytes as a
 * Buffer, with reply.send's default types. Then the hooks, and the payload
 * they hand back written as Fastify would (on-send.ts): a string or Buffer
 * by one writeHead and one end. A hook's error takes the app's headers back
 * off the record first, so the error answer carries none of them.
 */
function writeStoredAfterHooks (
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  parts: ResponseParts,
  hooks: readonly OnSendHook[]
): FastifyReply | Promise<FastifyReply> | undefined {
  const merge = mergeIntoReply(reply, parts)
  if (typeof merge === 'string') return viaReply(merge, request, reply, response, parts)
  if (merge instanceof Error) throw merge
  const { status, body } = parts
  reply.code(status)
  let payload: string | Buffer | undefined
  if (body !== null && !isNullBodyStatus(status)) {
    const text = typeof body === 'string'
    if (merge.record['content-type'] === undefined && !(hasRawHeaders(reply.raw as ServerResponse) && reply.raw.hasHeader('content-type'))) {
      mergeInPlace(merge, 'content-type', text ? DEFAULT_TEXT_TYPE : 'application/octet-stream')
    }
    payload = text ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  } else if (body === null && request.raw.method === 'HEAD' && parts.headLength !== undefined) {
    // Hono answers HEAD with `new Response(null, getResponse)`: the GET's length.
    mergeInPlace(merge, 'content-length', String(parts.headLength))
  }
  const restore = (): void => { undoMerge(merge) }
  return afterOnSendHooks(hooks, reply, payload, restore, (final) => {
    const way = finishAfterOnSend(reply, final, restore)
    wentOut(reply, way, undefined, hooks.length)
    return way
  })
}

/**
 * The name of the header that marks @hono/node-server's RESPONSE_ALREADY_SENT
 * (`@hono/node-server/utils/response`): a bodiless Response an app returns
 * after writing the raw response itself.
 */
const ALREADY_SENT = 'x-hono-already-sent'

/** Whether the response is such a marker. Only bodiless responses are looked at, without building their Headers. */
function writtenByTheApp (response: Response, parts: ResponseParts | undefined): boolean {
  if (parts === undefined) return response.body === null && response.headers.has(ALREADY_SENT)
  if (parts.body !== null) return false
  if (parts.headers !== undefined) return parts.headers.has(ALREADY_SENT)
  const init = parts.init
  if (init === undefined || init === null) return false
  for (const name in init) {
    if (name.length === ALREADY_SENT.length && name.toLowerCase() === ALREADY_SENT) return true
  }
  return false
}

/**
 * What rules out both of our writers, whatever the response. Over HTTP/2
 * only the stream writer may write (`streams`), and only a live stream:
 * see writeNative.
 */
function replyGuard (reply: FastifyReply, hooks: readonly OnSendHook[] | null | undefined, streams: boolean): SendReason | undefined {
  // onSend hooks the plugin cannot read (or run) are left to reply.send.
  if (hooks === undefined) return 'onSend hooks in scope'
  const raw = reply.raw
  if (raw.headersSent) return 'headers already sent'
  // The fast writer needs Node's HTTP/1 fields, which HTTP/2 does not have.
  if (!streams && !(raw instanceof ServerResponse)) return 'HTTP/2'
  return undefined
}

/**
 * A native (or materialized) Response: a body that turns out to be complete
 * goes out through the fast writer with its length; a live stream through
 * the stream writer.
 */
async function writeNative (request: FastifyRequest, reply: FastifyReply, response: Response, hooks: readonly OnSendHook[] | null | undefined): Promise<FastifyReply | undefined> {
  const status = response.status
  const body = response.body
  // HTTP/2 frames a stream itself and has no reason phrase.
  const http2 = !(reply.raw instanceof ServerResponse)
  const refused = body === null || isNullBodyStatus(status)
    ? 'no body to stream'
    : !http2 && !canChunk(reply.raw)
        ? 'no chunked framing (HTTP/1.0)'
        : request.raw.method === 'HEAD'
          ? 'HEAD answered with a stream'
          : !http2 && isCustomStatusText(status, response.statusText) ? 'custom statusText' : undefined
  if (refused !== undefined) return viaReply(refused, request, reply, response, undefined)

  const headers = response.headers
  const asStream: ResponseParts = { status, body: null, init: undefined, headers, headLength: undefined }
  // Framed by the app as chunked: a stream, whatever it holds.
  const payload = headers.has('transfer-encoding') ? await readAvailable(body!) : await bufferIfComplete(body!)
  if (Buffer.isBuffer(payload)) {
    // Complete: from here on it is a stored body like a lightweight response's.
    const parts: ResponseParts = { status, body: payload, init: undefined, headers, headLength: undefined }
    return writeStored(request, reply, response, parts, hooks, http2 ? 'HTTP/2' : undefined)
  }
  const head = outgoingHeaders(reply, asStream, true)
  if (typeof head === 'string') return viaReply(head, request, reply, response, undefined, payload)
  // The stream writer after all, if the hooks hand the stream back untouched (send-writer.ts).
  if (hooks !== null) return viaReply('onSend hooks on a stream', request, reply, response, undefined, payload)
  wentOut(reply, 'stream writer')
  await writeStream(reply, status, http2 ? http2Head(head) : head, payload)
  return undefined
}

function viaReply (
  reason: SendReason,
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  parts: ResponseParts | undefined,
  started?: StartedBody
): Promise<FastifyReply> {
  return writeThroughReply(reason, request, reply, response, parts, started)
}
