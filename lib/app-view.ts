import type { FetchApp } from './bindings.js'
import { defaultErrorHandler, isHonoApp, notFoundHandlerOf, useErrorHandler, useKnownPath, type ErrorHandler } from './internals/hono.js'
import { plainRequestPath } from './web/request.js'

// Set on the per-request env object by the view's not-found handler.
const kUnmatched = Symbol('fastify-hono.unmatched')

/**
 * The app as the mount serves it: a view made with Hono's own `basePath('/')`,
 * which shares the app's router, routes and not-found handler, so routes
 * added later are served and the app itself is never modified (it answers
 * as before wherever else it is used). The view differs in two ways:
 * - While the app has no error handler of its own, an error other than an
 *   HTTPException leaves `app.fetch` and reaches Fastify's error handler,
 *   onError hooks and log, as a Fastify route's error does. An HTTPException
 *   keeps Hono's answer (its status, its own response). An `app.onError()`,
 *   set before or after registration, is used as it is. Sub-apps mounted
 *   with `app.route()` follow the same rule: Hono wraps their routes in their
 *   own handler only when they have one.
 * - With `notFound: 'fastify'`, a request no route matched is marked, so the
 *   route can hand it to Fastify's not-found handler.
 * - Its getPath, while it is Hono's default, takes the routing path the
 *   bridge already knows from the request (internals/hono.ts, useKnownPath):
 *   the same path, without scanning the URL again.
 * The view's not-found handler is the app's as it was at registration (Hono
 * keeps it private): set `app.notFound()` before registering.
 */
export function mountView (app: FetchApp, notFound: 'hono' | 'fastify'): FetchApp {
  if (!isHonoApp(app)) return app
  const hono = app
  const view = hono.basePath('/')
  // basePath() of Hono 4.1 does not copy the not-found handler: the view takes the app's.
  const appNotFound = notFoundHandlerOf(hono)
  if (appNotFound !== undefined && notFoundHandlerOf(view) !== appNotFound) view.notFound(appNotFound)
  const honoDefault = defaultErrorHandler(hono)
  if (honoDefault !== undefined) {
    const toFastify: ErrorHandler = (err, c) => {
      if ('getResponse' in err) return honoDefault(err, c) // an HTTPException: Hono's answer
      // hono/body-limit before 4.13 reads c.error after the handler and puts
      // its 413 in place of the error handler's answer: it needs one.
      if (err.name === 'BodyLimitError') return honoDefault(err, c)
      throw err
    }
    useErrorHandler(view, () => hono.errorHandler === honoDefault ? toFastify : hono.errorHandler)
  }
  // Hono's routing path, taken from the request where the bridge knows it, rather than scanned for in the URL.
  useKnownPath(view, plainRequestPath)
  if (notFound === 'fastify') {
    view.notFound((c) => {
      (c.env as Record<symbol, boolean>)[kUnmatched] = true
      return c.text('404 Not Found', 404)
    })
  }
  return view
}

/** Whether the view's not-found handler answered this request (`notFound: 'fastify'`). */
export function wasUnmatched (env: object): boolean {
  return (env as Record<symbol, boolean>)[kUnmatched] === true
}
