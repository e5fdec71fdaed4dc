import type { FastifyReply, FastifyRequest } from 'fastify'
import { rpcMetadata } from './internals/otel.js'

// The `routeName` option: once the app has routed a request to a Hono
// route, that route becomes the one Fastify's tools read, so none of them
// needs a hook of its own (docs/route-names.md).

interface SpanLike {
  setAttribute (key: string, value: string): unknown
  updateName (name: string): unknown
}

interface OtelRequest {
  opentelemetry?: () => { span?: SpanLike | null, context?: unknown } | undefined
}

type RouteOptionsGetter = (this: FastifyRequest) => FastifyRequest['routeOptions']

/** Fastify's own `routeOptions` getter (public API), found once on the request's prototype chain. */
let routeOptionsGetter: RouteOptionsGetter | null | undefined

function fastifyRouteOptions (request: FastifyRequest): RouteOptionsGetter | null {
  if (routeOptionsGetter !== undefined) return routeOptionsGetter
  for (let proto = Object.getPrototypeOf(request); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, 'routeOptions')
    if (descriptor !== undefined) {
      routeOptionsGetter = typeof descriptor.get === 'function' ? descriptor.get as RouteOptionsGetter : null
      return routeOptionsGetter
    }
  }
  routeOptionsGetter = null
  return null
}

/**
 * Names the request after its Hono route (`/v2/users/:id`, prefix included):
 * - `request.routeOptions.url` gives it from now on (what fastify-metrics
 *   labels with, and what any later hook reads), the rest of routeOptions
 *   as Fastify builds it;
 * - the request's log lines from now on carry `route` ("request completed"
 *   included: Fastify writes it with `reply.log`, the same logger);
 * - @fastify/otel's request span gets it as `http.route` and in its name
 *   (`GET /v2/users/:id`), and so does the HTTP instrumentation's server
 *   span, through the RPC metadata @fastify/otel fills.
 */
export function labelRequest (request: FastifyRequest, reply: FastifyReply, route: string): void {
  const getter = fastifyRouteOptions(request)
  if (getter !== null) {
    Object.defineProperty(request, 'routeOptions', {
      configurable: true,
      enumerable: false,
      get () {
        // Every property as Fastify made it (5.0 has `config` and `schema` as
        // non-enumerable getters, and freezes the object), `url` aside.
        const options = getter.call(this)
        const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(options)
        descriptors.url = { value: route, enumerable: true, writable: false, configurable: false }
        const named = Object.create(Object.getPrototypeOf(options), descriptors) as typeof options
        return Object.isFrozen(options) ? Object.freeze(named) : named
      }
    })
  }

  const log = request.log
  if (typeof log?.child === 'function') {
    const child = log.child({ route })
    request.log = child
    // The reply logs "request completed" with its own reference to the same logger.
    if (reply.log === log) reply.log = child
  }

  const otel = (request as FastifyRequest & OtelRequest).opentelemetry
  if (typeof otel === 'function') {
    const { span, context } = otel.call(request) ?? {}
    if (span != null) {
      span.setAttribute('http.route', route)
      span.updateName(`${request.method} ${route}`)
    }
    const rpc = rpcMetadata(context)
    if (rpc !== undefined) rpc.route = route
  }
}
