import type { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { onSendHooks, ownReplyHeaders, replyHeaders, type OnSendHook } from '../internals/fastify.js'
import { isInjected } from '../internals/light-my-request.js'
import { canChunk, hasRawHeaders, isHttp2, nodeWritesLength } from '../internals/node.js'
import { responseParts, type ResponseParts } from '../web/response.js'
import { readNative, type NativeRead } from './complete-body.js'
import { writeAfterOnSendHooks } from './on-send.js'
import { writeOwn } from './own-writer.js'
import { planReply, type ReplyFacts } from './plan.js'
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
  const facts = new ReplyView(request, reply)
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
    case 'after onSend hooks':
      return writeAfterOnSendHooks(reply, plan, hooks!)
    default:
      return writeThroughReply(plan.reason!, request, reply, response, parts, started, plan.length)
  }
}

/**
 * What the plan needs to know of the reply, read from Fastify and Node when
 * the plan asks: most responses need only a few of these facts, and the plan
 * runs on every request. Only the onSend hooks are read at once (the plan and
 * its writer both need them).
 */
class ReplyView implements ReplyFacts {
  readonly hooks: readonly OnSendHook[] | null | undefined
  readonly #request: FastifyRequest
  readonly #reply: FastifyReply
  readonly #raw: ServerResponse

  constructor (request: FastifyRequest, reply: FastifyReply) {
    this.#request = request
    this.#reply = reply
    this.#raw = reply.raw as ServerResponse
    this.hooks = onSendHooks(reply)
  }

  get headers (): Readonly<Record<string, string | string[]>> { return replyHeaders(this.#reply) }
  // Only the way after onSend hooks changes that record in place.
  get ownHeaders (): boolean { return this.hooks !== null && this.hooks !== undefined && ownReplyHeaders(this.#reply) !== undefined }
  get method (): string { return this.#request.raw.method ?? 'GET' }
  get http2 (): boolean { return isHttp2(this.#raw) }
  get headersSent (): boolean { return this.#raw.headersSent }
  get rawHeaders (): boolean { return hasRawHeaders(this.#raw) }
  get rawFraming (): boolean {
    const raw = this.#raw
    return hasRawHeaders(raw) && (raw.hasHeader('content-length') || raw.hasHeader('transfer-encoding') || raw.hasHeader('trailer'))
  }

  get rawContentType (): boolean { return hasRawHeaders(this.#raw) && this.#raw.hasHeader('content-type') }
  get chunking (): boolean { return canChunk(this.#raw) }
  get nodeWritesLength (): boolean { return nodeWritesLength(this.#raw) }
  get injected (): boolean { return isInjected(this.#raw) }
}

function nothing (): undefined {
  return undefined
}
