import { errorCodes, type FastifyInstance, type FastifyReply, type HTTPMethods } from 'fastify'
import { findSymbol } from './find-symbol.js'

/**
 * Whether onSend hooks apply to this reply's route. They only run through
 * reply.send, so the fast writer must step aside for them. Fastify keeps them
 * on the route context, under a private symbol described 'fastify.context'
 * (set on the reply as it is built),
 * as an array, or null when there are none (checked on 5.0–5.12.8). If that
 * ever changes, this answers true and every reply takes the fallback: slower,
 * never wrong.
 */
export function hasOnSendHooks (reply: FastifyReply): boolean {
  kRouteContext ??= findSymbol(reply, 'fastify.context')
  if (kRouteContext === null) return true
  const context = (reply as unknown as Record<symbol, { onSend?: unknown } | undefined>)[kRouteContext]
  return context === undefined || context.onSend !== null
}

let kRouteContext: symbol | null | undefined

/**
 * The headers stored with reply.header(), read in place rather than through
 * reply.getHeaders(), which copies them together with the raw response's
 * (writeHead merges those itself). Fastify keeps them in an own property of
 * the reply under a private symbol described 'fastify.reply.headers'
 * (checked on 5.0–5.12.8); without it, getHeaders() is used.
 */
export function replyHeaders (reply: FastifyReply): Record<string, string | string[]> {
  kReplyHeaders ??= findSymbol(reply, 'fastify.reply.headers')
  if (kReplyHeaders === null) return reply.getHeaders() as Record<string, string | string[]>
  return (reply as unknown as Record<symbol, Record<string, string | string[]>>)[kReplyHeaders]
}

let kReplyHeaders: symbol | null | undefined

/**
 * The scopes around a plugin's scope, innermost first, up to the root.
 * Fastify creates each scope with `Object.create(parent)` (checked on 5.0 to
 * 5.12.8), so they are the instance's prototype chain. If that ever changes,
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
  return (fastify as unknown as { supportedMethods: HTTPMethods[] }).supportedMethods
}

/** Fastify's FST_ERR_REP_RESPONSE_BODY_CONSUMED: a Response whose body was already read. */
export function responseBodyConsumed (): Error {
  return new (errorCodes as unknown as Record<'FST_ERR_REP_RESPONSE_BODY_CONSUMED', new () => Error>).FST_ERR_REP_RESPONSE_BODY_CONSUMED()
}
