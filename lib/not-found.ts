import type { FetchApp } from './bindings.js'

// Set on the per-request env object by the view's not-found handler.
const kUnmatched = Symbol('fastify-hono.unmatched')

interface HonoLike extends FetchApp {
  router: unknown
  getPath: unknown
  routes: unknown
  errorHandler: unknown
  notFound (handler: (c: { env: object, text: (body: string, status: 404) => Response }) => Response): unknown
}

/** Whether `app` is a Hono app this module can make a view of. */
export function isHonoApp (app: FetchApp): boolean {
  const hono = app as Partial<HonoLike>
  return typeof hono.notFound === 'function' && typeof hono.router === 'object' && typeof hono.getPath === 'function'
}

/**
 * For `notFound: 'fastify'`: a view of the app whose not-found handler marks
 * the request, so the route can hand it to Fastify's not-found handler. The
 * view shares the app's router, routes and (live) error handler, the way
 * Hono's own basePath() clones do (hono 4.13 hono-base.js #clone), so routes
 * added later are served, and the app itself is left untouched: its own
 * not-found handler still answers wherever else it is used.
 */
export function withUnmatchedMarker (app: FetchApp): FetchApp {
  const hono = app as HonoLike
  const Hono = hono.constructor as new (options: { router: unknown, getPath: unknown }) => HonoLike
  const view = new Hono({ router: hono.router, getPath: hono.getPath })
  view.routes = hono.routes
  Object.defineProperty(view, 'errorHandler', { get: () => hono.errorHandler, configurable: true, enumerable: true })
  view.notFound((c) => {
    (c.env as Record<symbol, boolean>)[kUnmatched] = true
    return c.text('404 Not Found', 404)
  })
  return view
}

export function wasUnmatched (env: object): boolean {
  return (env as Record<symbol, boolean>)[kUnmatched] === true
}
