import type { FastifyInstance, RouteOptions } from 'fastify'
import { FST_ERR_HONO_DUPLICATED_MOUNT, FST_ERR_HONO_INVALID_PREFIX } from './errors.js'
import { enclosingScopes, supportedMethods } from './internals/fastify.js'

/**
 * The mount's routes, and the rule that settles a Fastify route and the mount
 * meeting on the same path: **a Fastify route wins**. Fastify's router already
 * prefers a more specific path (`/v2/users` over `/v2/*`); this module makes
 * the same true where the two paths are the same (a wildcard at the mount
 * point, such as the `OPTIONS *` of @fastify/cors, or the mount point itself),
 * in either order of registration:
 * - a route registered before the mount keeps its methods there: the mount
 *   registers the other methods only;
 * - a route registered after the mount is given a constraint that every
 *   request meets, so it is inserted beside the mount's route and, being the
 *   more constrained, answers before it.
 * The mount answers everything else under its prefix.
 */

export type MountRoute = Omit<RouteOptions, 'url' | 'method'>

/** The constraint given to a route that takes a path from a mount registered before it. */
const YIELD_CONSTRAINT = 'fastifyHonoYield'

interface MountRouteRegistry {
  /** The routes the mounts of this server registered: method → route keys. */
  routes: Map<string, Set<string>>
  /** The mounts' own handlers, to tell their routes from the user's. */
  handlers: WeakSet<object>
  /** Instances that already carry the onRoute hook. */
  hooked: WeakSet<object>
  onRoute: (this: FastifyInstance, route: RouteOptions) => void
}

// One registry per server: every scope of a Fastify server shares its router.
const registries = new WeakMap<object, MountRouteRegistry>()

/**
 * Registers the mount point (`/prefix`) and everything below it
 * (`/prefix/*`), each for every method no Fastify route already holds there.
 * At the root, `/*` alone covers `/` too.
 */
export function registerMountRoutes (fastify: FastifyInstance, route: MountRoute): void {
  const registry = registryOf(fastify)
  registry.handlers.add(route.handler)
  watchLaterRoutes(fastify, registry)

  // [the URL Fastify will give the route, the route]
  const targets: Array<[string, Omit<RouteOptions, 'method'>]> = []
  const pointUrl = fullUrl(fastify.prefix, '')
  if (pointUrl !== '' && pointUrl !== '/') {
    targets.push([pointUrl, { ...route, url: '/', prefixTrailingSlash: 'no-slash' }])
  }
  targets.push([fullUrl(fastify.prefix, '/*'), { ...route, url: '/*' }])

  for (const [url, options] of targets) {
    const methods = supportedMethods(fastify).filter((method) => !takenByFastify(fastify, registry, method, url))
    if (methods.length === 0) continue
    addRoute(fastify, { ...options, method: methods })
    for (const method of methods) {
      let keys = registry.routes.get(method)
      if (keys === undefined) registry.routes.set(method, keys = new Set())
      keys.add(routeKey(url))
    }
  }
}

/**
 * The URL Fastify gives a route path under a prefix (the `/` route with
 * `prefixTrailingSlash: 'no-slash'` is the prefix itself).
 */
function fullUrl (prefix: string, path: string): string {
  if (path === '') return prefix
  return prefix.endsWith('/') ? prefix + path.slice(1) : prefix + path
}

/**
 * The router's key for a route path, loosened so that it matches under every
 * router option (`caseSensitive`, `ignoreTrailingSlash`,
 * `ignoreDuplicateSlashes`); `*` is the router's `/*`. A loose match is
 * always confirmed with `hasRoute`, which applies the options as set.
 */
function routeKey (url: string): string {
  let key = url === '*' ? '/*' : url.replace(/\/{2,}/g, '/')
  if (key.length > 1 && key.endsWith('/')) key = key.slice(0, -1)
  return key.toLowerCase()
}

/**
 * Whether a route that is not a mount's holds `method` at `url`,
 * unconstrained. Another mount there is an error that names the prefix
 * (Fastify's own would list every method of the catch-all).
 */
function takenByFastify (fastify: FastifyInstance, registry: MountRouteRegistry, method: string, url: string): boolean {
  const taken = hasRoute(fastify, method, url)
  if (taken && registry.routes.get(method)?.has(routeKey(url)) === true) throw new FST_ERR_HONO_DUPLICATED_MOUNT(shownPrefix(fastify))
  return taken
}

/**
 * Adds one of the mount's routes. The router refuses some prefixes with an
 * uncoded error (find-my-way: a `*` before the end, say): that becomes an
 * error naming the prefix.
 */
function addRoute (fastify: FastifyInstance, route: RouteOptions): void {
  try {
    fastify.route(route)
  } catch (err) {
    if ((err as { code?: unknown }).code !== undefined) throw err
    throw new FST_ERR_HONO_INVALID_PREFIX(shownPrefix(fastify), (err as Error).message, { cause: err })
  }
}

function shownPrefix (fastify: FastifyInstance): string {
  return fastify.prefix === '' ? '/' : fastify.prefix
}

function hasRoute (fastify: FastifyInstance, method: string, url: string): boolean {
  try {
    return fastify.hasRoute({ method: method as RouteOptions['method'] & string, url })
  } catch {
    return false
  }
}

function registryOf (fastify: FastifyInstance): MountRouteRegistry {
  let registry = registries.get(fastify.server)
  if (registry === undefined) {
    const created: MountRouteRegistry = {
      routes: new Map(),
      handlers: new WeakSet(),
      hooked: new WeakSet(),
      onRoute (route) { yieldToLaterRoute(this, created, route) }
    }
    registries.set(fastify.server, registry = created)
  }
  return registry
}

/**
 * Watches the routes added after the mount, wherever they can be added: an
 * onRoute hook on every scope around the mount, up to the root. Fastify copies
 * a scope's onRoute hooks into the scopes created in it later, but not into
 * those that exist already, hence every level. If the scopes around a plugin
 * cannot be found (see enclosingScopes), a wildcard route added after the
 * mount fails with FST_ERR_DUPLICATED_ROUTE.
 */
function watchLaterRoutes (fastify: FastifyInstance, registry: MountRouteRegistry): void {
  for (const scope of enclosingScopes(fastify)) {
    if (registry.hooked.has(scope)) break // and so are the scopes above it
    registry.hooked.add(scope)
    scope.addHook('onRoute', registry.onRoute)
  }
}

/**
 * A route is being added where a mount already has a route for one of its
 * methods (the insertion would throw FST_ERR_DUPLICATED_ROUTE): it gets the
 * yield constraint, which every request meets, so the router keeps both and
 * picks it, the more constrained. A route with constraints of its own does
 * not collide and is left alone. `*` becomes `/*`, the same path to the
 * router, so that it sits in the same node as the mount's route rather than
 * in one the mount's shadows.
 */
function yieldToLaterRoute (fastify: FastifyInstance, registry: MountRouteRegistry, route: RouteOptions): void {
  if (registry.handlers.has(route.handler)) return
  if (route.constraints !== undefined && route.constraints !== null && Object.keys(route.constraints).length > 0) return
  // The router takes `*` for `/*`, but its findRoute does not.
  const url = route.url === '*' ? '/*' : route.url
  const key = routeKey(url)
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  const collides = methods.some((method) => registry.routes.get(method)?.has(key) === true && hasRoute(fastify, method, url))
  if (!collides) return

  if (!fastify.hasConstraintStrategy(YIELD_CONSTRAINT)) fastify.addConstraintStrategy(yieldStrategy())
  route.constraints = { [YIELD_CONSTRAINT]: true }
  if (route.url !== url) {
    route.url = url
    ;(route as RouteOptions & { path?: string }).path = url
  }
}

/**
 * Every request derives the value `true`; routes constrained with it match
 * every request. Once a route uses it, the router derives it for every
 * request of the server: one call and one small object each.
 */
function yieldStrategy (): Parameters<FastifyInstance['addConstraintStrategy']>[0] {
  return {
    name: YIELD_CONSTRAINT,
    storage () {
      const handlers = new Map<unknown, unknown>()
      return {
        get: (value: unknown) => handlers.get(value) ?? null,
        set: (value: unknown, handler: unknown) => { handlers.set(value, handler) }
      } as ReturnType<Parameters<FastifyInstance['addConstraintStrategy']>[0]['storage']>
    },
    deriveConstraint: () => true,
    mustMatchWhenDerived: false
  }
}
