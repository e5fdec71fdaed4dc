import type { FastifyInstance, RouteOptions } from 'fastify'
import type { FetchApp } from '../bindings.js'
import { FST_ERR_HONO_INVALID_OPTION } from '../errors.js'
import { enclosingScopes } from '../internals/fastify.js'
import { rootInstance } from '../internals/fastify-root.js'
import { isHonoApp, isMiddleware } from '../internals/hono.js'
import type { MountRoute } from '../mount-routes.js'
import { joinPath, type Mount } from '../request/url.js'
import type { BindingsUse } from './bindings-use.js'
import { mirrorHooks, MirrorStats, type MirrorContext } from './mirror.js'
import { checkShare, resolveMigration, type MigrationOption, type ResolvedMigrationRoute } from './options.js'
import { shareConstraint, useShareConstraint, type Split } from './split.js'
import { exportMetrics } from './metrics.js'
import { printMigration, type HonoMigrationRoute } from './report.js'

/**
 * Where a server's migration stands, and the mount's part in moving routes
 * with proof: the `migration` option's mirrors (mirror.ts) and shares
 * (split.ts) set up at registration, and `fastify.honoMigration()`,
 * `fastify.printHonoMigration()` and `fastify.setHonoShare()` decorated once
 * at the root.
 */

interface MountEntry {
  app: FetchApp
  /** What goes before the app's paths. */
  base: string
  routes: ResolvedMigrationRoute[]
  stats: Map<string, MirrorStats>
  bindingsUse: BindingsUse | undefined
}

interface ServerMigration {
  mounts: MountEntry[]
  /** The Fastify routes seen being added (from the first mount on), by normalized key. */
  fastifyRoutes: Map<string, { method: string, url: string }>
  /** The mounts' own route handlers, to tell their routes from Fastify's. */
  mountHandlers: WeakSet<object>
  /** Mirrors waiting for their Fastify route, by normalized key. */
  pendingMirrors: Map<string, (route: RouteOptions) => void>
  /** Mirrored keys whose Fastify route got the hooks. */
  attached: Set<string>
  hooked: WeakSet<object>
  onRoute: (this: FastifyInstance, route: RouteOptions) => void
}

const byServer = new WeakMap<object, ServerMigration>()

export interface MigrationSetup {
  fastify: FastifyInstance
  app: FetchApp
  /** The app as the mount serves it. */
  view: FetchApp
  mount: Mount
  base: string
  option: MigrationOption | undefined
  route: MountRoute
  /** Where the mount's TrackedBindings note reads (with the option). */
  bindingsUse: BindingsUse | undefined
}

/** Sets up what the `migration` option asks for, and notes the mount for `fastify.honoMigration()`. */
export function setupMigration ({ fastify, app, view, mount, base, option, route, bindingsUse }: MigrationSetup): void {
  const migration = resolveMigration(option, fastify.prefix)
  const server = serverMigration(fastify)
  server.mountHandlers.add(route.handler as object)
  for (const scope of enclosingScopes(fastify)) {
    if (server.hooked.has(scope)) break
    server.hooked.add(scope)
    scope.addHook('onRoute', server.onRoute)
  }
  const entry: MountEntry = { app, base: base.replace(/\/+$/, ''), routes: migration?.routes ?? [], stats: new Map(), bindingsUse }
  server.mounts.push(entry)
  if (migration === undefined) return

  const context: MirrorContext = { app: view, mount, fastify, concurrency: migration.concurrency, timeout: migration.timeout, logValues: migration.logValues, inFlight: 0 }
  for (const target of migration.routes) {
    const key = routeKey(target.method, target.url)
    if (target.split !== undefined) {
      useShareConstraint(fastify)
      fastify.route({ ...route, method: target.method as RouteOptions['method'], url: target.path, constraints: shareConstraint(target.split) })
    }
    if (target.mirror !== undefined) {
      const stats = new MirrorStats()
      entry.stats.set(key, stats)
      const hooks = mirrorHooks(target.key, target.mirror, context, stats)
      server.pendingMirrors.set(key, (fastifyRoute) => {
        for (const [name, hook] of Object.entries(hooks)) addRouteHook(fastifyRoute, name, hook)
        server.attached.add(key)
      })
    }
  }
  fastify.addHook('onReady', async () => { checkTwins(fastify, server, entry) })
  exportMetrics(fastify, () => honoMigration(server, fastify))
}

/** At ready: every configured route has its Hono twin, and a mirrored one its Fastify route, with the mirror's hooks. */
function checkTwins (fastify: FastifyInstance, server: ServerMigration, entry: MountEntry): void {
  const honoKeys = new Set(honoRoutesOf(entry).map((route) => routeKey(route.method, route.url)))
  const anyMethod = new Set(honoRoutesOf(entry).filter((route) => route.method === 'ALL').map((route) => routeKey('ALL', route.url).slice(4)))
  for (const target of entry.routes) {
    const key = routeKey(target.method, target.url)
    if (isHonoApp(entry.app) && !honoKeys.has(key) && !anyMethod.has(key.slice(key.indexOf(' ') + 1))) {
      fail(`routes: "${target.key}": the app has no route ${target.method} ${target.url.slice(entry.base.length) || '/'} to be the twin`)
    }
    if (target.mirror === undefined || server.attached.has(key)) continue
    const found = fastifyRouteAt(fastify, server, target.method, target.url)
    fail(found
      ? `routes: "${target.key}" is mirrored, but its Fastify route was added before the mount: register the mount first, as any plugin whose hooks a route needs`
      : `routes: "${target.key}" is mirrored, but no Fastify route answers it`)
  }
}

function fail (problem: string): never {
  throw new FST_ERR_HONO_INVALID_OPTION('migration', problem)
}

function addRouteHook (route: RouteOptions, name: string, hook: unknown): void {
  const record = route as unknown as Record<string, unknown>
  const existing = record[name]
  record[name] = existing === undefined || existing === null ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook]
}

function serverMigration (fastify: FastifyInstance): ServerMigration {
  let server = byServer.get(fastify.server)
  if (server !== undefined) return server
  const created: ServerMigration = {
    mounts: [],
    fastifyRoutes: new Map(),
    mountHandlers: new WeakSet(),
    pendingMirrors: new Map(),
    attached: new Set(),
    hooked: new WeakSet(),
    onRoute (route) { seeRoute(created, route) }
  }
  byServer.set(fastify.server, server = created)
  decorate(fastify, created)
  return created
}

/** A route being added: a Fastify route is noted, and gets the mirror's hooks if it is a mirrored twin. */
function seeRoute (server: ServerMigration, route: RouteOptions): void {
  if (server.mountHandlers.has(route.handler)) return
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  for (const method of methods) {
    const key = routeKey(method, route.url)
    if (route.constraints === undefined || route.constraints === null || Object.keys(route.constraints).length === 0) server.fastifyRoutes.set(key, { method, url: route.url })
    const attach = server.pendingMirrors.get(key)
    if (attach !== undefined && !server.attached.has(key)) attach(route)
  }
}

function decorate (fastify: FastifyInstance, server: ServerMigration): void {
  const root = rootInstance(fastify)
  if (root.hasDecorator('honoMigration')) return
  root.decorate('honoMigration', () => honoMigration(server, fastify))
  root.decorate('printHonoMigration', () => printMigration(honoMigration(server, fastify)))
  root.decorate('setHonoShare', (route: string, percent: number) => { setShare(server, route, percent) })
}

function setShare (server: ServerMigration, route: string, percent: number): void {
  checkShare(percent, `setHonoShare("${route}")`)
  for (const mount of server.mounts) {
    const target = mount.routes.find((candidate) => candidate.key === route || routeKey(candidate.method, candidate.url) === normalizedKey(route))
    if (target?.split !== undefined) {
      target.split.share = percent
      return
    }
  }
  fail(`setHonoShare("${route}"): no route with a share; give it one in the mount's migration option ({ share: 0 })`)
}

/** Every route of the server, as the migration sees it. */
function honoMigration (server: ServerMigration, fastify: FastifyInstance): HonoMigrationRoute[] {
  const routes = new Map<string, HonoMigrationRoute>()
  for (const [key, route] of server.fastifyRoutes) routes.set(key, { method: route.method, url: route.url, state: 'fastify' })
  for (const mount of server.mounts) {
    for (const hono of honoRoutesOf(mount)) {
      const methods = hono.method === 'ALL' ? ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] : [hono.method]
      for (const method of methods) {
        const key = routeKey(method, hono.url)
        const existing = routes.get(key)
        if (existing !== undefined) {
          existing.state = 'both'
        } else if (hono.method !== 'ALL' || fastifyRouteAt(fastify, server, method, hono.url)) {
          routes.set(key, { method, url: hono.url, state: fastifyRouteAt(fastify, server, method, hono.url) ? 'both' : 'hono' })
        }
      }
      if (hono.method === 'ALL' && ![...routes.keys()].some((key) => key.endsWith(' ' + normalizePath(hono.url)))) {
        routes.set(routeKey('ALL', hono.url), { method: 'ALL', url: hono.url, state: 'hono' })
      }
      const reads = mount.bindingsUse?.get(hono.url)
      if (reads !== undefined) {
        for (const method of methods.concat('ALL')) {
          const entry = routes.get(routeKey(method, hono.url))
          if (entry !== undefined) entry.readsFastify = [...reads].sort()
        }
      }
    }
    for (const target of mount.routes) {
      const key = routeKey(target.method, target.url)
      const entry = routes.get(key) ?? { method: target.method, url: target.url, state: 'hono' as const }
      routes.set(key, entry)
      if (target.split !== undefined) entry.share = shareOf(target.split)
      const stats = mount.stats.get(key)
      if (stats !== undefined && target.mirror !== undefined) {
        entry.mirror = {
          sample: target.mirror.sample,
          compared: stats.compared,
          matched: stats.matched,
          mismatched: stats.mismatched,
          errored: stats.errored,
          skipped: stats.skipped,
          skippedBy: { ...stats.skippedBy },
          lastMismatch: [...stats.lastMismatch],
          latency: { fastify: stats.fastifyMs.percentiles(), hono: stats.honoMs.percentiles() }
        }
      }
    }
  }
  // Fastify's automatic HEAD route stands with its GET route, as Hono answers HEAD with GET's handler.
  for (const [key, route] of routes) {
    if (route.method === 'HEAD' && routes.has('GET' + key.slice(4)) && route.mirror === undefined && route.share === undefined) routes.delete(key)
  }
  return [...routes.values()].sort((a, b) => a.url < b.url ? -1 : a.url > b.url ? 1 : a.method < b.method ? -1 : a.method > b.method ? 1 : 0)
}

function shareOf (split: Split): NonNullable<HonoMigrationRoute['share']> {
  const sticky = split.sticky === undefined ? undefined : 'header' in split.sticky ? `header ${split.sticky.header}` : 'cookie' in split.sticky ? `cookie ${split.sticky.cookie}` : 'address'
  return { percent: split.share, sticky, hono: split.hono, fastify: split.fastify }
}

/** The app's handler routes, as clients see them. */
function honoRoutesOf (mount: MountEntry): Array<{ method: string, url: string }> {
  if (!isHonoApp(mount.app)) return []
  const routes = (mount.app as FetchApp & { routes?: Array<{ method: string, path: string, handler: (...args: never[]) => unknown }> }).routes
  if (!Array.isArray(routes)) return []
  return routes
    .filter((route) => typeof route.handler === 'function' && !isMiddleware(route.handler))
    .map((route) => ({ method: route.method, url: joinPath(mount.base, route.path) }))
}

/** Whether a Fastify route (not a mount's, unconstrained) is registered at this method and path pattern. */
function fastifyRouteAt (fastify: FastifyInstance, server: ServerMigration, method: string, url: string): boolean {
  if (server.fastifyRoutes.has(routeKey(method, url))) return true
  try {
    return fastify.hasRoute({ method: method as RouteOptions['method'] & string, url })
  } catch {
    return false
  }
}

/** A route's key: method and path, with parameters unnamed (`:id`, `:id(^\d+)` and `:id{[0-9]+}` alike). */
function routeKey (method: string, url: string): string {
  return `${method.toUpperCase()} ${normalizePath(url)}`
}

function normalizedKey (key: string): string {
  const at = key.indexOf(' ')
  return at === -1 ? key : routeKey(key.slice(0, at), key.slice(at + 1))
}

function normalizePath (url: string): string {
  let path = url.replace(/\/{2,}/g, '/').replace(/:[^/]+/g, ':')
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1)
  return path === '' ? '/' : path
}
