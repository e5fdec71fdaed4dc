import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { FetchApp } from './bindings.js'
import { handlerRoute, isHonoApp, type MatchResult, type RouteRecord } from './internals/hono.js'
import { joinPath } from './request/url.js'
import { labelRequest } from './route-label.js'

/**
 * The request decoration that names the Hono route a request was routed to,
 * mount prefix included (`/v2/users/:id`), or undefined. Fastify itself only
 * knows the mount's catch-all (`/v2/*`).
 */
const ROUTE_DECORATION = 'honoRoute'

// Per request: what the app's router matched for it, or null.
const kMatch = Symbol('fastify-hono.match')

type Tracked = FastifyRequest & { [kMatch]: MatchResult | null }

/**
 * Lets the requests of one mount name their Hono route: decorates the
 * mount's requests with `honoRoute`, a getter, and wraps the router of the
 * mount's view of the app (never the app's own) so that each match is kept
 * on the request it was made for. Returns what the route handler calls just
 * before `app.fetch()`: the per-request cost is two field writes; the name
 * is worked out only when something reads it.
 *
 * `prefix` is what goes before the app's route paths: the mount prefix when
 * the app sees paths without it, '' when it sees them whole. With `label`
 * (the `routeName` option), a request routed to a Hono route is named after
 * it for Fastify's tools as soon as the app matches it (lib/route-label.ts).
 */
export function nameRoutes (fastify: FastifyInstance, view: FetchApp, prefix: string, label = false): (request: FastifyRequest, reply: FastifyReply) => void {
  const names = new WeakMap<RouteRecord, string>()
  if (!fastify.hasRequestDecorator(kMatch)) fastify.decorateRequest(kMatch, null)
  if (!fastify.hasRequestDecorator(ROUTE_DECORATION)) {
    fastify.decorateRequest(ROUTE_DECORATION, {
      getter (this: FastifyRequest): string | undefined {
        const match = (this as Tracked)[kMatch]
        if (match === null || match === undefined) return undefined
        const route = handlerRoute(match)
        if (route === undefined) return undefined
        let name = names.get(route)
        if (name === undefined) {
          name = joinPath(prefix, route.path)
          names.set(route, name)
        }
        return name
      }
    })
  }
  if (!isHonoApp(view)) return ignore

  // The view is the mount's own clone of the app: its router property can be
  // replaced without touching the app, and the router behind it stays shared.
  const hono = view
  const router = hono.router
  let pending: Tracked | null = null
  let pendingReply: FastifyReply | null = null
  hono.router = {
    get name () { return router.name },
    add (method, path, handler) { router.add(method, path, handler) },
    match (method, path) {
      const result = router.match(method, path)
      // Hono matches synchronously inside fetch(), before any handler runs
      // (a HEAD request is matched as GET, still synchronously).
      if (pending !== null) {
        const request = pending
        pending[kMatch] = result
        pending = null
        if (label && pendingReply !== null) {
          const route = request.honoRoute
          if (route !== undefined) labelRequest(request, pendingReply, route)
        }
        pendingReply = null
      }
      return result
    }
  }
  return (request, reply) => {
    pending = request as Tracked
    pendingReply = reply
  }
}

function ignore (): void {}
