import { Buffer } from 'node:buffer'
import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify'
import { hasReplyTrailers, replyHeaders, sendPastOnSend, type OnSendHook } from '../internals/fastify.js'
import { isHttp2 } from '../internals/node.js'
import type { StartedBody } from './complete-body.js'
import { writeOwn } from './own-writer.js'
import { http2Head, isAscii } from './plan.js'
import type { SendReason } from './reasons.js'
import { wentOut } from './went-out.js'

/**
 * The route's onSend hooks, run by the plugin where it prepared the reply
 * as reply.send would (send-writer.ts), and what they hand back written as
 * Fastify writes it (its onSendEnd), by the plugin's own writer where it
 * can (own-writer.ts), else by Fastify's past the hooks.
 */

/**
 * The route's onSend hooks, run by the plugin instead of reply.send, with
 * Fastify's semantics: in order, each given the payload the one before
 * handed back (undefined keeps it), in any of the three forms (returning,
 * calling `done(err, payload)`, or resolving a promise); a hook that throws,
 * calls done with an error or rejects (with nothing: Fastify's
 * FST_ERR_SEND_UNDEFINED_ERR) stops the chain. Then `done` gets the error or
 * the final payload. Synchronous hooks run synchronously, as in Fastify.
 */
function runOnSendHooks (
  hooks: readonly OnSendHook[],
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: unknown, payload: unknown) => void
): void {
  let i = 0
  const next = (err?: Error | null, newPayload?: unknown): void => {
    if (err !== undefined && err !== null) {
      done(err, undefined)
      return
    }
    if (newPayload !== undefined) payload = newPayload
    if (i === hooks.length) {
      done(null, payload)
      return
    }
    let result: unknown
    try {
      result = hooks[i++](request, reply, payload, next)
    } catch (error) {
      done(error, undefined)
      return
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then((value) => { next(null, value) }, (error: unknown) => {
        done(error ?? new errorCodes.FST_ERR_SEND_UNDEFINED_ERR(), undefined)
      })
    }
  }
  next()
}

/**
 * How the response went out after the hooks, in the plan's names ('fast':
 * the plugin's own write of what the hooks handed back), or a promise for
 * the stream writer, still at work.
 */
type Finished = 'fast' | 'reply.send' | Promise<unknown>

/**
 * Runs the hooks on `payload`, then writes what they hand back
 * (writeAfterHooks) and the debug line. When a hook fails, `restore` runs
 * and the error goes to Fastify's error handler.
 * Synchronously when every hook answered synchronously (the usual case: the
 * @fastify/* plugins' hooks take a callback), with no promise and no
 * microtask: returns undefined when the response was written (the reply is
 * hijacked), or the reply (a thenable that settles when Fastify's writer is
 * done: the route handler returns it, as a Fastify handler returns reply),
 * or throws. Otherwise a promise for the reply.
 */
export function afterOnSendHooks (
  hooks: readonly OnSendHook[],
  reply: FastifyReply,
  payload: unknown,
  restore: () => void,
  /** The app's live stream behind `payload`, if any (reply.send's way only). */
  live: StartedBody | undefined,
  /** Why the response was prepared as reply.send would (the plan's reason), for the log. */
  guard: SendReason | undefined
): FastifyReply | Promise<FastifyReply> | undefined {
  /** Set when the hooks end before runOnSendHooks returns: what conclude gave, or threw. */
  let now: { finished: Finished } | { error: unknown } | undefined
  let later: { resolve: (reply: FastifyReply) => void, reject: (err: unknown) => void } | undefined
  runOnSendHooks(hooks, reply.request, reply, payload, (err, final) => {
    // As in Fastify, the response is written where the last hook calls back.
    let finished: Finished
    try {
      finished = conclude(reply, err, final, payload, live, restore, guard, hooks.length)
    } catch (error) {
      if (later === undefined) now = { error }
      else later.reject(error)
      return
    }
    if (later === undefined) now = { finished }
    else if (typeof finished === 'string') later.resolve(reply)
    else finished.then(() => { later!.resolve(reply) }, later.reject)
  })
  if (now === undefined) return new Promise((resolve, reject) => { later = { resolve, reject } })
  if ('error' in now) throw now.error
  const finished = now.finished
  if (finished === 'fast') return undefined
  if (finished === 'reply.send') return reply
  return finished.then(() => reply)
}

/**
 * The end of the hooks: on an error, `restore` and throw it (for Fastify's
 * error handler); else what they handed back written (writeAfterHooks),
 * then the debug line: the way it took, the guard that prepared it as
 * reply.send would (if any), how many hooks ran. The one place the lines
 * of the hooks' ways are written; a write that throws logs nothing.
 */
function conclude (
  reply: FastifyReply,
  err: unknown,
  final: unknown,
  given: unknown,
  live: StartedBody | undefined,
  restore: () => void,
  guard: SendReason | undefined,
  hooks: number
): Finished {
  if (err !== null && err !== undefined) {
    restore()
    throw err
  }
  const finished = writeAfterHooks(reply, final, given, live, guard, restore)
  // The stream writer's line names no guard: the live stream did not go through reply.send's preparation.
  const own = typeof finished === 'string'
  wentOut(reply, own ? finished : 'stream', own ? guard : undefined, hooks)
  return finished
}

/**
 * Writes what the onSend hooks handed back, as Fastify's reply.send does
 * after its hooks: the reply's status (a hook may have changed it) and
 * header record (which the hooks saw and changed), a Content-Length for a
 * string or Buffer unless one that fits is there (or, for HEAD, any), none
 * for 1xx and 204, and `Content-Length: 0` for no payload. Streams and
 * Responses, and anything with trailers, go on through Fastify's own
 * writers without running the hooks again. Other payloads are refused as
 * Fastify refuses them. Returns 'fast' when it wrote the response
 * itself, or 'reply.send'.
 *
 * When writeHead rejects a header, Node's state is reset and `restore` puts
 * back the reply's headers from before the app's response, so that the 500
 * Fastify's error handler writes carries none of the failed response's.
 */
function writeOnSendPayload (reply: FastifyReply, payload: unknown, restore: () => void): 'fast' | 'reply.send' {
  const isBytes = typeof payload === 'string' || Buffer.isBuffer(payload)
  if (isBytes || payload === undefined || payload === null) {
    if (hasReplyTrailers(reply)) {
      // Fastify frames trailers; reply.send takes a Buffer or undefined as it is
      // (a string would be given a charset, null serialized).
      sendOnward(reply, typeof payload === 'string' ? Buffer.from(payload) : payload ?? undefined)
      return 'reply.send'
    }
    const raw = reply.raw
    const status = raw.statusCode
    const headers = replyHeaders(reply)
    const method = reply.request.raw.method
    let body: string | Buffer | undefined
    if (!isBytes) {
      if (status >= 200 && status !== 204 && status !== 304 && method !== 'HEAD') headers['content-length'] = '0'
    } else if (status < 200 || status === 204) {
      delete headers['content-type']
      delete headers['content-length']
    } else {
      body = payload as string | Buffer
      // Node writes the head together with a string body, in the body's
      // encoding (UTF-8), and on its own, as latin1, before a Buffer: a
      // non-ASCII Content-Disposition goes out as it does through reply.send
      // of the app's bytes (and the way out's other writers).
      const disposition = headers['content-disposition']
      if (typeof body === 'string' && disposition !== undefined && !isAscii(String(disposition))) body = Buffer.from(body)
      const declared = headers['content-length']
      const length = Buffer.byteLength(body)
      if (declared === undefined || declared === '' || (method !== 'HEAD' && Number(declared) !== length)) headers['content-length'] = String(length)
    }
    writeOwn(reply, { status, head: headers, merge: undefined, defaultType: undefined, length: undefined, nodeWritesLength: false, body: body ?? null }, undefined, restore)
    return 'fast'
  }
  if (isStreamPayload(payload)) {
    sendOnward(reply, payload)
    return 'reply.send'
  }
  throw new errorCodes.FST_ERR_REP_INVALID_PAYLOAD_TYPE(typeof payload)
}

/**
 * reply.send past the hooks. onSendHooks, which found them, also checked
 * that the context can be set aside; a plain reply.send would run them
 * again, so if it ever cannot, this is an error for Fastify's handler.
 */
function sendOnward (reply: FastifyReply, payload: unknown): void {
  if (!sendPastOnSend(reply, payload)) throw new Error('fastify-hono: the route context could not be set aside to send past the onSend hooks')
}

/** What Fastify's onSendEnd streams: a Node stream, a web stream, or a Response. */
function isStreamPayload (payload: unknown): boolean {
  if (payload === null || typeof payload !== 'object') return false
  const candidate = payload as { pipe?: unknown, getReader?: unknown }
  return typeof candidate.pipe === 'function' || typeof candidate.getReader === 'function' ||
    Object.prototype.toString.call(payload) === '[object Response]'
}

/**
 * What the hooks handed back, written: the app's live stream, handed back
 * untouched, goes out through the stream writer with the reply's status and
 * headers as the hooks left them (if Node rejects that head, `restore` puts
 * the reply's headers back, as after any payload); anything else as
 * writeOnSendPayload writes it.
 */
function writeAfterHooks (
  reply: FastifyReply,
  final: unknown,
  given: unknown,
  live: StartedBody | undefined,
  guard: SendReason | undefined,
  restore: () => void
): Finished {
  if (live !== undefined && final === given && guard === 'onSend hooks on a stream' && !(given as ReadableStream).locked && !hasReplyTrailers(reply)) {
    const record = replyHeaders(reply)
    const head = isHttp2(reply.raw) ? http2Head(record) : record
    return writeOwn(reply, { status: reply.raw.statusCode, head, merge: undefined, defaultType: undefined, length: undefined, nodeWritesLength: false, body: null }, live, restore)!
  }
  return writeOnSendPayload(reply, final, restore)
}
