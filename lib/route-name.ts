import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { FetchApp } from './bindings.js'
import { isHonoApp } from './app-view.js'
import { joinPath } from './request/url.js'

/**
 * The request decoration that names the Hono route a request was routed to,
 * mount prefix included (`/v2/users/:id`), or undefined. Fastify itself only
 * knows the mount's catch-all (`/v2/*`).
 */
export const ROUTE_DECORATION = 'honoRoute'

// Per request: what the app's router matched for it, or null.
const kMatch = Symbol('fastify-hono.match')

// Hono 4's route record, as its router holds it next to each handler.
interface RouteRecord {
  path: string
  method: string
}

type Handler = (...args: never[]) => unknown

// The result of Hono's `router.match()`: [[[handler, route], params], ...], ...
type MatchResult = [ReadonlyArray<readonly [readonly [Handler, RouteRecord], unknown]>, ...unknown[]]

interface Router {
  name: string
  add (method: string, path: string, handler: unknown): void
  match (method: string, path: string): MatchResult
}

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
 * the app sees paths without it, '' when it sees them whole.
 */
export function nameRoutes (fastify: FastifyInstance, view: FetchApp, prefix: string): (request: FastifyRequest) => void {
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
  const hono = view as FetchApp & { router: Router }
  const router = hono.router
  let pending: Tracked | null = null
  hono.router = {
    get name () { return router.name },
    add (method, path, handler) { router.add(method, path, handler) },
    match (method, path) {
      const result = router.match(method, path)
      // Hono matches synchronously inside fetch(), before any handler runs
      // (a HEAD request is matched as GET, still synchronously).
      if (pending !== null) {
        pending[kMatch] = result
        pending = null
      }
      return result
    }
  }
  return (request) => { pending = request as Tracked }
}

function ignore (): void {}

/**
 * The route of the first matched handler that is not a middleware, by Hono's
 * own rule (as `hono/dev`'s `inspectRoutes` tells them apart): a function
 * declaring fewer than two parameters cannot call `next()`, so the chain
 * ends there, and every middleware before it passed the request on unless it
 * answered itself. Undefined when only middleware matched, or nothing: Hono's
 * not-found handler answered.
 */
function handlerRoute (match: MatchResult): RouteRecord | undefined {
  const matched = match[0]
  if (!Array.isArray(matched)) return undefined
  for (let i = 0; i < matched.length; i++) {
    // Checked as read: a router of another shape names nothing rather than throw.
    const pair = matched[i]?.[0]
    if (!Array.isArray(pair)) return undefined
    const [handler, route] = pair
    if (typeof handler !== 'function' || typeof route?.path !== 'string') return undefined
    if (!isMiddleware(handler)) return route
  }
  return undefined
}

// Hono marks the wrapper it puts around a sub-app's handler (an app with
// its own onError, mounted with `app.route()`) with the handler it wraps:
// under this key, or, before hono 4.6.15, under a private
// Symbol('composedHandler').
const COMPOSED_HANDLER = '__COMPOSED_HANDLER'

function wrappedHandler (handler: Handler): Handler | undefined {
  const inner = (handler as unknown as Record<string, unknown>)[COMPOSED_HANDLER]
  if (typeof inner === 'function') return inner as Handler
  // Only a two-parameter function can be such a wrapper: one-parameter handlers skip the scan.
  if (handler.length < 2) return undefined
  for (const symbol of Object.getOwnPropertySymbols(handler)) {
    const value = (handler as unknown as Record<symbol, unknown>)[symbol]
    if (symbol.description === 'composedHandler' && typeof value === 'function') return value as Handler
  }
  return undefined
}

function isMiddleware (handler: Handler): boolean {
  let target = handler
  for (let inner = wrappedHandler(target); inner !== undefined; inner = wrappedHandler(target)) target = inner
  return target.length > 1
}
