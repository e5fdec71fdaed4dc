import type { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { onSendHooks, ownReplyHeaders, replyHeaders } from '../internals/fastify.js'
import { isInjected } from '../internals/light-my-request.js'
import { canChunk, isHttp2, nodeWritesLength, rawHasHeader, rawHeaderRecord } from '../internals/node.js'
import { responseParts, type ResponseParts } from '../web/response.js'
import { readNative, type NativeRead } from './complete-body.js'
import { writeOwn } from './own-writer.js'
import { planReply, type ReplyFacts } from './plan.js'
import { writeThroughFastify } from './send-writer.js'
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
  return carryOut(request, reply, response, responseParts(response), undefined)
}

/**
 * The plan, made once from what is known of the Response and the reply,
 * carried out by its writer. A native Response (no `parts`) is read first
 * (complete-body.ts), then comes back here with what was read.
 */
function carryOut (
  request: FastifyRequest,
  reply: FastifyReply,
  response: Response,
  parts: ResponseParts | undefined,
  /** For a native Response: its body's kind, its reason phrase, and a live stream's ready part. */
  native: NativeRead | undefined
): FastifyReply | Promise<FastifyReply | undefined> | undefined {
  if (parts === undefined) return readNative(response).then((read) => carryOut(request, reply, response, read.parts, read))
  const facts = replyFacts(request, reply)
  const plan = planReply(parts, native?.kind ?? 'stored', native?.statusText ?? '', facts)
  // `started` is there for a live stream only, which the plan sends by `stream` or reply.send.
  const started = native?.started
  const hooks = facts.hooks
  // The debug line, here for the ways that run no onSend hooks; where the
  // plugin runs them, on-send.ts writes it once they have run.
  if (plan.way !== 'after onSend hooks' && (plan.way !== 'reply.send' || hooks === null || hooks === undefined)) wentOut(reply, plan.way, plan.reason)
  switch (plan.way) {
    case 'the app itself':
      // The app wrote to c.env.outgoing itself (@hono/node-server's
      // RESPONSE_ALREADY_SENT): the reply is the app's, and Fastify's
      // onResponse hooks and log run when it finishes.
      reply.hijack()
      return undefined
    case 'fast':
    case 'stream':
      return writeOwn(reply, plan, started)?.then(nothing)
    default:
      // `after onSend hooks` and `reply.send`.
      return writeThroughFastify(plan, request, reply, response, parts, started, hooks)
  }
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
