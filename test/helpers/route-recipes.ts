// The recipes of docs/route-names.md, as the tests run them.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { getRPCMetadata } from '@opentelemetry/core'

/**
 * An onSend hook, added after @fastify/otel and in a scope around the
 * mounts: it runs before @fastify/otel's own onSend hook ends the span.
 */
export function honoRouteOnSpan (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
  const route = request.honoRoute
  if (route !== undefined) {
    const { span, context } = request.opentelemetry()
    span?.setAttribute('http.route', route)
    span?.updateName(`${request.method} ${route}`)
    // @opentelemetry/instrumentation-http names its server span from here.
    const rpc = context == null ? undefined : getRPCMetadata(context)
    if (rpc !== undefined) rpc.route = route
  }
  done(null, payload)
}

/** fastify-metrics' `routeMetrics.overrides.labels.getRouteLabel`. */
export function routeLabel (request: FastifyRequest): string {
  return request.honoRoute ?? request.routeOptions.url ?? '__unknown__'
}

/**
 * Fastify's `logger.serializers.res`: the default, plus the route. Fastify 5
 * types its argument with `statusCode` always there, Fastify 6 as a
 * `Partial<FastifyReply>`: this takes the latter, which fits both.
 */
export function resWithRoute (reply: Partial<FastifyReply>): { statusCode?: number, route?: string } {
  // Fastify may log with a reply it could not complete: no request then.
  return { statusCode: reply.statusCode, route: reply.request?.honoRoute ?? reply.request?.routeOptions.url }
}
