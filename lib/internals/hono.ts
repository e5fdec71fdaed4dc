import type { FetchApp } from '../bindings.js'

// Hono's fields beyond its documented API, checked on hono 4.13 (and on
// the older versions test/versions.test.ts runs against). Each function below
// says what happens when a field is missing or has another shape: the
// mount keeps serving the app, with less of the integration.

export type ErrorHandler = (err: Error, c: unknown) => Response | Promise<Response>

type NotFoundHandler = (c: { env: object, text: (body: string, status: 404) => Response }) => Response

/** Hono 4's route record, as its router holds it next to each handler. */
export interface RouteRecord {
  path: string
  method: string
}

type Handler = (...args: never[]) => unknown

/** The result of Hono's `router.match()`: [[[handler, route], params], ...], ... */
export type MatchResult = [ReadonlyArray<readonly [readonly [Handler, RouteRecord], unknown]>, ...unknown[]]

interface Router {
  name: string
  add (method: string, path: string, handler: unknown): void
  match (method: string, path: string): MatchResult
}

/** A Hono app as the mount reads it: `router`, `getPath` and `errorHandler` are fields, not API. */
interface HonoApp extends FetchApp {
  router: Router
  getPath: unknown
  errorHandler: ErrorHandler
  basePath (path: string): HonoApp
  notFound (handler: NotFoundHandler): unknown
}

/**
 * Whether `app` is a Hono app the mount can make a view of (public
 * `notFound` and `basePath`, and the `router` and `getPath` fields). If not,
 * the app is served as any fetch app: its errors keep its own answers, and
 * no route names.
 */
export function isHonoApp (app: FetchApp): app is HonoApp {
  const hono = app as Partial<HonoApp>
  return typeof hono.notFound === 'function' && typeof hono.basePath === 'function' &&
    typeof hono.router === 'object' && typeof hono.getPath === 'function'
}

/**
 * The app's not-found handler. Hono 4.1 keeps it in a field
 * (`notFoundHandler`) that basePath() does not copy (4.2 on copies it).
 * Undefined if the field is gone: the view then has Hono's default 404.
 */
export function notFoundHandlerOf (app: HonoApp): NotFoundHandler | undefined {
  const handler = (app as { notFoundHandler?: unknown }).notFoundHandler
  return typeof handler === 'function' ? handler as NotFoundHandler : undefined
}

/**
 * Hono's default error handler, as a fresh app of the same class holds it in
 * its `errorHandler` field (one function per copy of the hono module), or
 * undefined if such an app cannot be made or has no such field: the app's
 * errors then keep Hono's answer.
 */
export function defaultErrorHandler (app: HonoApp): ErrorHandler | undefined {
  try {
    const fresh = new (app.constructor as new () => Partial<HonoApp>)()
    return typeof fresh.errorHandler === 'function' ? fresh.errorHandler : undefined
  } catch {
    return undefined
  }
}

/**
 * Replaces the error handler a view uses (its `errorHandler` field, which
 * Hono reads on each error) with one chosen when the error happens.
 */
export function useErrorHandler (view: HonoApp, current: () => ErrorHandler): void {
  Object.defineProperty(view, 'errorHandler', { get: current, configurable: true, enumerable: true })
}

type GetPath = (request: Request, options?: unknown) => string

/**
 * Gives the view a getPath that takes the routing path from `known` (the
 * path the bridge already put in the URL: lib/web/request.ts,
 * plainRequestPath) rather than scan the URL for it, where the view's
 * getPath is one of Hono's two defaults, read from fresh apps of the same
 * class: `new App()` (strict) and `new App({ strict: false })`, which drops
 * a trailing `/`. Hono calls `this.getPath(request, { env })` once per
 * request, in its dispatch. `known` answers only for a URL that is an origin
 * and a plain path (no `#`, no `%`, nothing the URL parser would rewrite),
 * and then the path up to the query: on such a URL, every Hono 4 default
 * reads the same (hono 4.1 to 4.13.19: from the first `/` after the
 * authority up to `?`, and in later versions `#` too; only a `%` leads to
 * decoding).
 * Everything else, and an app with its own getPath option, goes to the
 * view's getPath as it was. If a fresh app cannot be made, or has no
 * getPath function, nothing changes.
 */
export function useKnownPath (view: HonoApp, known: (request: Request) => string | undefined): void {
  const current = view.getPath
  if (typeof current !== 'function') return
  let strict: unknown
  let notStrict: unknown
  try {
    const App = view.constructor as new (options?: { strict?: boolean }) => Partial<HonoApp>
    strict = new App().getPath
    notStrict = new App({ strict: false }).getPath
  } catch {
    return
  }
  if (typeof strict !== 'function' || typeof notStrict !== 'function' || strict === notStrict) return
  const fallback = current as GetPath
  if (current === strict) {
    view.getPath = function getKnownPath (request: Request, options?: unknown): string {
      return known(request) ?? fallback(request, options)
    }
  } else if (current === notStrict) {
    view.getPath = function getKnownPathNotStrict (request: Request, options?: unknown): string {
      const path = known(request)
      if (path === undefined) return fallback(request, options)
      return path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */ ? path.slice(0, -1) : path
    }
  }
}

/**
 * The route of the first matched handler that is not a middleware, by Hono's
 * own rule (as `hono/dev`'s `inspectRoutes` tells them apart): a function
 * declaring fewer than two parameters cannot call `next()`, so the chain
 * ends there, and every middleware before it passed the request on unless it
 * answered itself. Undefined when only middleware matched, or nothing (Hono's
 * not-found handler answered), or the match has another shape: checked as
 * read, a router of another shape names nothing rather than throw.
 */
export function handlerRoute (match: MatchResult): RouteRecord | undefined {
  const matched = match[0]
  if (!Array.isArray(matched)) return undefined
  for (let i = 0; i < matched.length; i++) {
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
// Symbol('composedHandler'). Neither found: the wrapper counts as a middleware.
const COMPOSED_HANDLER = '__COMPOSED_HANDLER'

function wrappedHandler (handler: Handler): Handler | undefined {
  const inner = (handler as { [COMPOSED_HANDLER]?: unknown })[COMPOSED_HANDLER]
  if (typeof inner === 'function') return inner as Handler
  // Only a two-parameter function can be such a wrapper: one-parameter handlers skip the scan.
  if (handler.length < 2) return undefined
  for (const symbol of Object.getOwnPropertySymbols(handler)) {
    const value: unknown = Reflect.get(handler, symbol)
    if (symbol.description === 'composedHandler' && typeof value === 'function') return value as Handler
  }
  return undefined
}

export function isMiddleware (handler: Handler): boolean {
  let target = handler
  for (let inner = wrappedHandler(target); inner !== undefined; inner = wrappedHandler(target)) target = inner
  return target.length > 1
}
