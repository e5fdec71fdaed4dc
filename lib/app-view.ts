import type { FetchApp } from './bindings.js'

// Set on the per-request env object by the view's not-found handler.
const kUnmatched = Symbol('fastify-hono.unmatched')

type ErrorHandler = (err: Error, c: unknown) => Response | Promise<Response>

interface HonoLike extends FetchApp {
  router: unknown
  getPath: unknown
  errorHandler: ErrorHandler
  basePath (path: string): HonoLike
  notFound (handler: (c: { env: object, text: (body: string, status: 404) => Response }) => Response): unknown
}

/** Whether `app` is a Hono app this module can make a view of. */
export function isHonoApp (app: FetchApp): boolean {
  const hono = app as Partial<HonoLike>
  return typeof hono.notFound === 'function' && typeof hono.basePath === 'function' &&
    typeof hono.router === 'object' && typeof hono.getPath === 'function'
}

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
 * The view's not-found handler is the app's as it was at registration (Hono
 * keeps it private): set `app.notFound()` before registering.
 */
export function mountView (app: FetchApp, notFound: 'hono' | 'fastify'): FetchApp {
  if (!isHonoApp(app)) return app
  const hono = app as HonoLike
  const view = hono.basePath('/')
  // Hono 4.1 keeps the not-found handler in a public field that basePath()
  // does not copy (4.2 on copies it): the view takes the app's.
  const appNotFound = (hono as { notFoundHandler?: unknown }).notFoundHandler
  if (typeof appNotFound === 'function' && (view as { notFoundHandler?: unknown }).notFoundHandler !== appNotFound) {
    view.notFound(appNotFound as Parameters<HonoLike['notFound']>[0])
  }
  const honoDefault = defaultErrorHandler(hono)
  if (honoDefault !== undefined) {
    const toFastify: ErrorHandler = (err, c) => {
      if ('getResponse' in err) return honoDefault(err, c) // an HTTPException: Hono's answer
      // hono/body-limit before 4.13 reads c.error after the handler and puts
      // its 413 in place of the error handler's answer: it needs one.
      if (err.name === 'BodyLimitError') return honoDefault(err, c)
      throw err
    }
    Object.defineProperty(view, 'errorHandler', {
      get: () => hono.errorHandler === honoDefault ? toFastify : hono.errorHandler,
      configurable: true,
      enumerable: true
    })
  }
  if (notFound === 'fastify') {
    view.notFound((c) => {
      (c.env as Record<symbol, boolean>)[kUnmatched] = true
      return c.text('404 Not Found', 404)
    })
  }
  return view
}

/**
 * Hono's default error handler, as a fresh app of the same class holds it
 * (one function per copy of the hono module), or undefined if such an app
 * cannot be made: the app's errors then keep Hono's answer.
 */
function defaultErrorHandler (app: HonoLike): ErrorHandler | undefined {
  try {
    const fresh = new (app.constructor as new () => Partial<HonoLike>)()
    return typeof fresh.errorHandler === 'function' ? fresh.errorHandler : undefined
  } catch {
    return undefined
  }
}

export function wasUnmatched (env: object): boolean {
  return (env as Record<symbol, boolean>)[kUnmatched] === true
}
