import { Buffer } from 'node:buffer'
import { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { hasOnSendHooks, responseBodyConsumed } from '../internals/fastify.js'
import { canChunk } from '../internals/node.js'
import { claimBody, isNullBodyStatus, responseParts, type ResponseParts } from '../web/response.js'
import { bufferIfComplete, readAvailable, type StartedBody } from './complete-body.js'
import { writeFast } from './fast-writer.js'
import { http2Head, isCustomStatusText, outgoingHeaders } from './head.js'
import type { SendReason } from './reasons.js'
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
export function writeResponse (request: FastifyRequest, reply: FastifyReply, response: Response): Promise<FastifyReply | undefined> | undefined {
  const parts = responseParts(response)
  if (writtenByTheApp(response, parts)) {
    // The app wrote to c.env.outgoing itself: the reply is the app's, and
    // Fastify's onResponse hooks and log run when it finishes.
    wentOut(reply, 'the app itself')
    reply.hijack()
    return undefined
  }
  if (parts === undefined) {
    if (response.bodyUsed) throw responseBodyConsumed()
    const refused = replyGuard(reply, true)
    if (refused !== undefined) return viaReply(refused, request, reply, response, undefined)
    return writeNative(request, reply, response)
  }
  // A body shared with copies (or this same response sent before) goes out once.
  if (parts.body !== null && !claimBody(response)) throw responseBodyConsumed()
  return writeStored(request, reply, response, parts, replyGuard(reply, false))
}

/**
 * A stored body (a lightweight Response's, or a native body read whole): the
 * fast writer, unless `refused` or a header guard sends it to reply.send.
 */
function writeStored (request: FastifyRequest, reply: FastifyReply, response: Response, parts: ResponseParts, refused: SendReason | undefined): Promise<FastifyReply> | undefined {
  const head = refused ?? outgoingHeaders(reply, parts, false)
  if (typeof head === 'string') return viaReply(head, request, reply, response, parts)
  wentOut(reply, 'fast writer')
  writeFast(reply, parts, head, request.raw.method ?? 'GET')
  return undefined
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
function replyGuard (reply: FastifyReply, streams: boolean): SendReason | undefined {
  // onSend hooks only run through reply.send.
  if (hasOnSendHooks(reply)) return 'onSend hooks in scope'
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
async function writeNative (request: FastifyRequest, reply: FastifyReply, response: Response): Promise<FastifyReply | undefined> {
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
    return writeStored(request, reply, response, parts, http2 ? 'HTTP/2' : undefined)
  }
  const head = outgoingHeaders(reply, asStream, true)
  if (typeof head === 'string') return viaReply(head, request, reply, response, undefined, payload)
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
  wentOut(reply, 'reply.send', reason)
  return writeThroughReply(request, reply, response, parts, started)
}

type Way = 'fast writer' | 'stream writer' | 'reply.send' | 'the app itself'

/**
 * At Fastify's `debug` log level, one line per response: which way it went
 * and, for reply.send, the guard that sent it there. Nothing at `info`, and
 * no object is built unless the level is on (pino's isLevelEnabled; a
 * logger without it is never asked).
 */
function wentOut (reply: FastifyReply, way: Way, guard?: SendReason): void {
  const log = reply.log as FastifyReply['log'] & { isLevelEnabled?: (level: string) => boolean }
  if (log.isLevelEnabled?.('debug') !== true) return
  if (guard === undefined) log.debug({ wayOut: way }, `fastify-hono: ${way}`)
  else log.debug({ wayOut: way, guard }, `fastify-hono: ${way}, because of ${guard}`)
}
