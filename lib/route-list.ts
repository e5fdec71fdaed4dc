import type { FastifyInstance } from 'fastify'
import type { FetchApp } from './bindings.js'
import { rootInstance } from './internals/fastify-root.js'
import { isHonoApp, isMiddleware } from './internals/hono.js'
import { joinPath } from './request/url.js'

/** One route a mount serves, as `fastify.honoRoutes()` lists it. */
export interface HonoRouteInfo {
  /** The HTTP method, as the app registered it (`ALL` for `app.all()`). */
  method: string
  /** The route's path as clients see it, prefix included: `/v2/users/:id`. */
  url: string
  /** The mount it belongs to: its prefix (`''` at the root). */
  prefix: string
}

interface Mount { app: FetchApp, prefix: string, base: string }

const mounts = new WeakMap<FastifyInstance, Mount[]>()

/** The handler routes of a Hono app (middleware left out, by Hono's own rule), read now: routes added later are listed too. */
function routesOf (mount: Mount): HonoRouteInfo[] {
  if (!isHonoApp(mount.app)) return []
  const routes = (mount.app as FetchApp & { routes?: Array<{ method: string, path: string, handler: (...args: never[]) => unknown }> }).routes
  if (!Array.isArray(routes)) return []
  return routes
    .filter((route) => typeof route.handler === 'function' && !isMiddleware(route.handler))
    .map((route) => ({ method: route.method, url: joinPath(mount.base, route.path), prefix: mount.prefix }))
}

/**
 * Makes a mount's routes visible: a debug-level log line at registration,
 * listing them, and `fastify.honoRoutes()` on the whole instance (decorated
 * once, at the root), which lists every mount's routes as they are when it
 * is called. `base` is what goes before the app's paths (the prefix, or ''
 * when the app sees them whole).
 */
export function listRoutes (fastify: FastifyInstance, app: FetchApp, base: string): void {
  const root = rootInstance(fastify)
  let registered = mounts.get(root)
  if (registered === undefined) {
    registered = []
    mounts.set(root, registered)
    const all = registered
    if (!root.hasDecorator('honoRoutes')) root.decorate('honoRoutes', () => all.flatMap(routesOf))
  }
  const mount: Mount = { app, prefix: fastify.prefix, base: base.replace(/\/+$/, '') }
  registered.push(mount)
  const log = fastify.log as FastifyInstance['log'] & { isLevelEnabled?: (level: string) => boolean }
  if (log.isLevelEnabled?.('debug') === true) {
    const routes = routesOf(mount).map((route) => `${route.method} ${route.url}`)
    const where = mount.prefix === '' ? '/' : mount.prefix
    log.debug({ prefix: where, routes }, isHonoApp(app)
      ? `fastify-hono: mounted at ${where}, ${routes.length} route${routes.length === 1 ? '' : 's'}`
      : `fastify-hono: a fetch app mounted at ${where} (its routes are its own)`)
  }
}
