import { errorCodes, type FastifyInstance, type FastifyReply, type FastifyRequest, type HTTPMethods } from 'fastify'
import { findSymbol, slots } from './find-symbol.js'

/** An onSend hook as Fastify stores it on the route context (bound, with its plugin's `this`). */
export type OnSendHook = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err?: Error | null, payload?: unknown) => void) => unknown

interface RouteContext { onSend?: OnSendHook[] | null }

/**
 * The onSend hooks that apply to this reply's route, in Fastify's order:
 * null when there are none, undefined when they cannot be read (then the
 * caller leaves the whole send to reply.send: slower, never wrong). Fastify
 * keeps them on the route context, an own property of the request under a
 * private symbol described 'fastify.context' (the reply reads it through a
 * getter), as an array or null (checked on 5.0–5.12.8 and 6.0.0-alpha.4). Hooks are
 * returned only from a context that is the request's own property, which
 * sendPastOnSend can then set aside; null (no hooks) from any.
 */
export function onSendHooks (reply: FastifyReply): readonly OnSendHook[] | null | undefined {
  const request = reply.request
  kRouteContext ??= findSymbol(request, 'fastify.context')
  if (kRouteContext === null) return undefined
  const context = slots(request)[kRouteContext] as RouteContext | undefined
  if (context === undefined || context === null) return undefined
  const hooks = context.onSend
  // Whether the context is the request's own matters only where there are
  // hooks (sendPastOnSend sets it aside): a hasOwnProperty call per request
  // spared on routes without any.
  if (hooks === null) return null
  return Array.isArray(hooks) && Object.prototype.hasOwnProperty.call(request, kRouteContext) ? hooks : undefined
}

let kRouteContext: symbol | null | undefined

/**
 * reply.send for a payload that has been through the route's onSend hooks
 * already: Fastify goes straight on to write it (its `onSendEnd`), without
 * running the hooks again. For the length of the call, the request's route
 * context is replaced by one that inherits everything from it but has no
 * onSend hooks; Fastify reads `context.onSend` synchronously in reply.send,
 * and whatever it reads later (an error handler, onResponse hooks, the error
 * payload's own onSend hooks) finds the real context again. Only for payloads
 * reply.send hands to its hooks as they are: undefined, streams and Responses
 * (a string, a Buffer or null would be given a content type or serialized
 * first). Returns false, having done nothing, when the context is not where
 * onSendHooks found it (it checks
 * the same before any hook runs).
 */
export function sendPastOnSend (reply: FastifyReply, payload: unknown): boolean {
  if (kRouteContext === null || kRouteContext === undefined) return false
  const request = reply.request
  const context = slots(request)[kRouteContext] as RouteContext | undefined
  if (context === undefined || context === null || !Object.prototype.hasOwnProperty.call(request, kRouteContext)) return false
  slots(request)[kRouteContext] = Object.create(context, { onSend: { value: null } })
  try {
    reply.send(payload)
  } finally {
    slots(request)[kRouteContext] = context
  }
  return true
}

/**
 * The headers stored with reply.header(), read in place rather than through
 * reply.getHeaders(), which copies them together with the raw response's
 * (writeHead merges those itself). Fastify keeps them in an own property of
 * the reply under a private symbol described 'fastify.reply.headers'
 * (checked on 5.0–5.12.8 and 6.0.0-alpha.4); without it, getHeaders() is used.
 */
export function replyHeaders (reply: FastifyReply): Record<string, string | string[]> {
  kReplyHeaders ??= findSymbol(reply, 'fastify.reply.headers')
  if (kReplyHeaders === null) return reply.getHeaders() as Record<string, string | string[]>
  return (slots(reply)[kReplyHeaders] as Record<string, string | string[]>)
}

let kReplyHeaders: symbol | null | undefined

/**
 * The reply's own header record (the one replyHeaders reads), to change in
 * place; undefined when it is not an own property of the reply under that
 * symbol (then only reply.header() can put headers where reply.send and the
 * onSend hooks look).
 */
export function ownReplyHeaders (reply: FastifyReply): Record<string, string | string[]> | undefined {
  kReplyHeaders ??= findSymbol(reply, 'fastify.reply.headers')
  if (kReplyHeaders === null || !Object.prototype.hasOwnProperty.call(reply, kReplyHeaders)) return undefined
  return (slots(reply)[kReplyHeaders] as Record<string, string | string[]>)
}

/**
 * Replaces the reply's header record (the one replyHeaders reads) with
 * another, for onSend hooks to see and change through reply.header() and
 * getHeader(). False, having done nothing, when the record is not an own
 * property of the reply under the symbol replyHeaders uses.
 */
export function setReplyHeaders (reply: FastifyReply, headers: Record<string, string | string[]>): boolean {
  kReplyHeaders ??= findSymbol(reply, 'fastify.reply.headers')
  if (kReplyHeaders === null || !Object.prototype.hasOwnProperty.call(reply, kReplyHeaders)) return false
  slots(reply)[kReplyHeaders] = headers
  return true
}

/**
 * Whether trailers were declared with reply.trailer(). Fastify keeps them
 * in an own property under a private symbol described
 * 'fastify.reply.trailers', null until the first (checked on 5.0–5.12.8 and 6.0.0-alpha.4).
 * Without it: true, so the caller leaves the framing to reply.send.
 */
export function hasReplyTrailers (reply: FastifyReply): boolean {
  kReplyTrailers ??= findSymbol(reply, 'fastify.reply.trailers')
  if (kReplyTrailers === null) return true
  return slots(reply)[kReplyTrailers] !== null
}

let kReplyTrailers: symbol | null | undefined

/**
 * The scopes around a plugin's scope, innermost first, up to the root.
 * Fastify creates each scope with `Object.create(parent)` (checked on 5.0 to
 * 5.12.8 and 6.0.0-alpha.4), so they are the instance's prototype chain. If that ever changes,
 * the walk ends at the first object that is not a Fastify instance.
 */
export function * enclosingScopes (fastify: FastifyInstance): Generator<FastifyInstance> {
  for (let scope = Object.getPrototypeOf(fastify) as Partial<FastifyInstance> | null; isFastify(scope); scope = Object.getPrototypeOf(scope) as Partial<FastifyInstance> | null) {
    yield scope
  }
}

function isFastify (scope: Partial<FastifyInstance> | null): scope is FastifyInstance {
  return scope !== null && typeof scope.addHook === 'function' && typeof scope.route === 'function' &&
    typeof scope.hasRoute === 'function'
}

// Both exist at runtime from fastify 5.0 on, but appear in its typings only
// from 5.5: read through these, the plugin also compiles against 5.0-5.4.

/** The HTTP methods the instance accepts (`fastify.supportedMethods`). */
export function supportedMethods (fastify: FastifyInstance): HTTPMethods[] {
  return (fastify as FastifyInstance & { supportedMethods: HTTPMethods[] }).supportedMethods
}

/** Fastify's FST_ERR_REP_RESPONSE_BODY_CONSUMED: a Response whose body was already read. */
export function responseBodyConsumed (): Error {
  const codes: Partial<Record<'FST_ERR_REP_RESPONSE_BODY_CONSUMED', new () => Error>> = errorCodes
  return new codes.FST_ERR_REP_RESPONSE_BODY_CONSUMED!()
}
