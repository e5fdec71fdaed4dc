import { Buffer } from 'node:buffer'
import type { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { onSendHooks, ownReplyHeaders, replyHeaders, responseBodyConsumed } from '../internals/fastify.js'
import { isInjected } from '../internals/light-my-request.js'
import { canChunk, isHttp2, nodeWritesLength, rawHasHeader, rawHeaderRecord } from '../internals/node.js'
import { ALREADY_SENT, isNullBodyStatus, responseParts, type ResponseParts } from '../web/response.js'
import { bufferIfComplete, readAvailable, type StartedBody } from './complete-body.js'
import { writeAfterOnSendHooks } from './on-send.js'
import { writeOwn } from './own-writer.js'
import { planReply, type BodyKind, type ReplyFacts } from './plan.js'
import { writeThroughReply } from './send-writer.js'
import { wentOut } from './went-out.js'

/**
 * How the app's Response goes out. The body is looked at first (a native
 * stream's ready part is read: complete-body.ts), then planReply (plan.ts)
 * decides, with every guard, and one writer carries the plan out:
 * - `fast` and `stream`: own-writer.ts, the plan's head, then a stored body
 *   by one end, or a live stream piped with backpressure (stream-writer.ts);
 * - `after onSend hooks`: on-send.ts, a stored body prepared as reply.send
 *   would, the hooks run, what they hand back written;
 * - `reply.send`: send-writer.ts, Fastify's own writer, for every failed guard.
 * Returns undefined when one of our writers sent the response (the handler
 * then returns nothing to Fastify, as a hijacked route does), the reply, or
 * a promise.
 */
export function writeResponse (request: FastifyRequest, reply: FastifyReply, response: Response): FastifyReply | Promise<FastifyReply | undefined> | undefined {
  const parts = responseParts(response)
  if (parts === undefined) return writeNative(request, reply, response)
  if (parts.appWrote) return leftToTheApp(reply)
  return carryOut(request, reply, response, parts, 'stored', '', undefined)
}

/** The plan, made once from what is known of the Response and the reply, carried out by its writer. */
function carryOut (
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  parts: ResponseParts,
  kind: BodyKind,
  statusText: string,
  started: StartedBody | undefined
): FastifyReply | Promise<FastifyReply | undefined> | undefined {
  const facts = replyFacts(request, reply)
  const plan = planReply(parts, kind, statusText, facts)
  switch (plan.way) {
    case 'fast':
    case 'stream':
      // `started` is there for a live stream only, which the plan sends by `stream` or reply.send.
      wentOut(reply, plan.way === 'fast' ? 'fast writer' : 'stream writer')
      return writeOwn(reply, plan, started)?.then(nothing)
    case 'after onSend hooks':
      return writeAfterOnSendHooks(reply, plan, facts.hooks!)
    default:
      return writeThroughReply(plan.reason!, request, reply, response, parts, started, plan.length)
  }
}

/**
 * A native (or materialized) Response. What its body has ready is read
 * first, so the plan knows whether it is complete (then it goes out like a
 * stored body, with its length) or a live stream; a stream that has already
 * failed rejects here, before any head is written. A body the app framed as
 * chunked stays a stream, however short.
 */
async function writeNative (request: FastifyRequest, reply: FastifyReply, response: Response): Promise<FastifyReply | undefined> {
  if (response.body === null && response.headers.has(ALREADY_SENT)) return leftToTheApp(reply)
  if (response.bodyUsed) throw responseBodyConsumed()
  const { status, headers, body } = response
  let kind: BodyKind = 'none'
  let stored: Buffer | null = null
  let started: StartedBody | undefined
  if (body !== null && !isNullBodyStatus(status)) {
    const ready = headers.has('transfer-encoding') ? await readAvailable(body) : await bufferIfComplete(body)
    if (Buffer.isBuffer(ready)) {
      kind = 'read whole'
      stored = ready
    } else {
      kind = 'live stream'
      started = ready
    }
  }
  const parts: ResponseParts = { status, body: stored, init: undefined, headers, headLength: undefined, appWrote: false }
  return await carryOut(request, reply, response, parts, kind, response.statusText, started)
}

/** What the plan needs to know of the reply, read from Fastify and Node. */
function replyFacts (request: FastifyRequest, reply: FastifyReply): ReplyFacts {
  const raw = reply.raw as ServerResponse
  const record = rawHeaderRecord(raw)
  const rawHeaders = record !== null
  const hooks = onSendHooks(reply)
  return {
    hooks,
    headers: replyHeaders(reply),
    // Only the way after onSend hooks changes that record in place.
    ownHeaders: hooks !== null && hooks !== undefined && ownReplyHeaders(reply) !== undefined,
    method: request.raw.method ?? 'GET',
    http2: isHttp2(raw),
    headersSent: raw.headersSent,
    rawHeaders,
    rawFraming: rawHeaders && (rawHasHeader(raw, record, 'content-length') || rawHasHeader(raw, record, 'transfer-encoding') || rawHasHeader(raw, record, 'trailer')),
    rawContentType: rawHeaders && rawHasHeader(raw, record, 'content-type'),
    chunking: canChunk(raw),
    nodeWritesLength: nodeWritesLength(raw),
    injected: isInjected(raw)
  }
}

function nothing (): undefined {
  return undefined
}

/**
 * The app wrote to c.env.outgoing itself (@hono/node-server's
 * RESPONSE_ALREADY_SENT): the reply is the app's, and Fastify's onResponse
 * hooks and log run when it finishes.
 */
function leftToTheApp (reply: FastifyReply): undefined {
  wentOut(reply, 'the app itself')
  reply.hijack()
  return undefined
}
