import { FST_ERR_HONO_INVALID_OPTION } from '../errors.js'
import { parsePointer } from './compare.js'
import { Split, type StickyKey } from './split.js'

/** The mount's `migration` option: what it mirrors and shifts, per route. */
export interface MigrationOption {
  /**
   * Per route, keyed as clients see it, prefix included: `'GET /v2/users/:id'`.
   * The Fastify route and the app's route at that method and path are twins.
   */
  routes?: Record<string, MigrationRouteOption>
  /** Mirrored runs at once for the mount; past it a sampled request is skipped and counted (default 8). */
  mirrorConcurrency?: number
  /** Milliseconds a mirrored run may take before it counts as errored (default 2000). */
  mirrorTimeout?: number
  /** Log the values that differ, not only their paths (default false: values may be personal data). */
  logValues?: boolean
}

export interface MigrationRouteOption {
  /** Percent (0–100) of the route's requests that go to the Hono twin instead of the Fastify route; `fastify.setHonoShare()` changes it. */
  share?: number
  /** Keep each client on one side: the key is a header, a cookie or the client address. Default: random per request. */
  sticky?: StickyKey
  /** Run a sample of the Fastify route's requests through the Hono twin too, after the client got Fastify's answer, and compare. */
  mirror?: boolean | MirrorOption
}

export interface MirrorOption {
  /** The share of requests mirrored, 0 to 1 (default 1). */
  sample?: number
  /** Headers compared besides Content-Type (`['location', 'cache-control']`). */
  headers?: string[]
  /** JSON pointers left out of the body's comparison; `*` stands for any key or index (`'/items/*\/createdAt'`). */
  ignore?: string[]
  /** Mirror a method other than GET and HEAD: only for a route without side effects (default false). */
  sideEffectFree?: boolean
  /** Bytes of each answer compared; a longer answer is skipped and counted (default 1 MiB). */
  maxBytes?: number
}

export interface ResolvedMirror {
  sample: number
  headers: string[]
  ignore: string[][]
  /** Whether the request body is kept for the mirrored run (a method with a body). */
  withBody: boolean
  maxBytes: number
}

export interface ResolvedMigrationRoute {
  /** `'GET /v2/users/:id'`, as written. */
  key: string
  method: string
  /** The path as clients see it. */
  url: string
  /** The path under the mount's prefix, as the mount registers it. */
  path: string
  split: Split | undefined
  mirror: ResolvedMirror | undefined
}

export interface ResolvedMigration {
  routes: ResolvedMigrationRoute[]
  concurrency: number
  timeout: number
  logValues: boolean
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY'])
const SAFE = new Set(['GET', 'HEAD'])
const MAX_TIMEOUT = 2 ** 31 - 1

/** Checks the option at registration, naming what is wrong. */
export function resolveMigration (option: MigrationOption | undefined, prefix: string): ResolvedMigration | undefined {
  if (option === undefined) return undefined
  if (option === null || typeof option !== 'object') fail('must be an object: { routes: { \'GET /path\': { share, mirror } } }')
  const { routes = {}, mirrorConcurrency = 8, mirrorTimeout = 2000, logValues = false } = option
  for (const name of Object.keys(option)) {
    if (!['routes', 'mirrorConcurrency', 'mirrorTimeout', 'logValues'].includes(name)) fail(`has no "${name}": routes, mirrorConcurrency, mirrorTimeout, logValues`)
  }
  if (routes === null || typeof routes !== 'object') fail('routes must be an object keyed \'METHOD /path\'')
  if (!(Number.isInteger(mirrorConcurrency) && mirrorConcurrency >= 1)) fail(`mirrorConcurrency must be a positive integer, got ${String(mirrorConcurrency)}`)
  if (!(Number.isInteger(mirrorTimeout) && mirrorTimeout >= 1 && mirrorTimeout <= MAX_TIMEOUT)) fail(`mirrorTimeout must be an integer number of milliseconds from 1 to ${MAX_TIMEOUT}, got ${String(mirrorTimeout)}`)
  if (typeof logValues !== 'boolean') fail(`logValues must be a boolean, got ${JSON.stringify(logValues)}`)
  const base = prefix.replace(/\/+$/, '')
  const resolved = Object.entries(routes).map(([key, route]) => resolveRoute(key, route, base))
  return { routes: resolved, concurrency: mirrorConcurrency, timeout: mirrorTimeout, logValues }
}

function resolveRoute (key: string, route: MigrationRouteOption, base: string): ResolvedMigrationRoute {
  const match = /^([A-Z]+) (\/\S*)$/.exec(key)
  if (match === null || !METHODS.has(match[1])) fail(`routes: "${key}" must be 'METHOD /path', such as 'GET /users/:id'`)
  const [, method, url] = match
  if (base !== '' && url !== base && !url.startsWith(base + '/')) fail(`routes: "${key}" is not under the mount's prefix "${base}"`)
  const path = base === '' ? url : (url.slice(base.length) === '' ? '/' : url.slice(base.length))
  if (route === null || typeof route !== 'object') fail(`routes: "${key}" must be an object: { share, sticky, mirror }`)
  for (const name of Object.keys(route)) {
    if (!['share', 'sticky', 'mirror'].includes(name)) fail(`routes: "${key}" has no "${name}": share, sticky, mirror`)
  }
  let split: Split | undefined
  if (route.share !== undefined || route.sticky !== undefined) {
    const share = route.share ?? 0
    checkShare(share, `routes: "${key}" share`)
    split = new Split(share, checkSticky(route.sticky, key))
  }
  let mirror: ResolvedMirror | undefined
  if (route.mirror !== undefined && route.mirror !== false) {
    const options: MirrorOption = route.mirror === true ? {} : route.mirror
    if (options === null || typeof options !== 'object') fail(`routes: "${key}" mirror must be true or an object`)
    const { sample = 1, headers = [], ignore = [], sideEffectFree = false, maxBytes = 1024 * 1024 } = options
    if (!(typeof sample === 'number' && sample >= 0 && sample <= 1)) fail(`routes: "${key}" mirror.sample must be a number from 0 to 1, got ${String(sample)}`)
    if (!Array.isArray(headers) || !headers.every((name) => typeof name === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))) fail(`routes: "${key}" mirror.headers must be header names`)
    if (!Array.isArray(ignore) || !ignore.every((pointer) => typeof pointer === 'string' && (pointer === '' || pointer.startsWith('/')))) fail(`routes: "${key}" mirror.ignore must be JSON pointers ('/createdAt', '/items/*/id')`)
    if (typeof sideEffectFree !== 'boolean') fail(`routes: "${key}" mirror.sideEffectFree must be a boolean`)
    if (!SAFE.has(method) && !sideEffectFree) fail(`routes: "${key}" is mirrored, but ${method} is not a safe method: mark the route mirror.sideEffectFree if running it twice has no effect`)
    if (!(Number.isSafeInteger(maxBytes) && maxBytes >= 0)) fail(`routes: "${key}" mirror.maxBytes must be a non-negative integer, got ${String(maxBytes)}`)
    mirror = { sample, headers: headers.map((name) => name.toLowerCase()), ignore: ignore.map(parsePointer), withBody: !SAFE.has(method), maxBytes }
  }
  return { key, method, url, path, split, mirror }
}

/** A share from 0 to 100. */
export function checkShare (share: unknown, what: string): asserts share is number {
  if (!(typeof share === 'number' && share >= 0 && share <= 100)) fail(`${what} must be a percentage from 0 to 100, got ${JSON.stringify(share)}`)
}

function checkSticky (sticky: unknown, key: string): StickyKey | undefined {
  if (sticky === undefined) return undefined
  const value = sticky as Record<string, unknown>
  if (value !== null && typeof value === 'object') {
    if (typeof value.header === 'string' && value.header !== '') return { header: value.header.toLowerCase() }
    if (typeof value.cookie === 'string' && value.cookie !== '') return { cookie: value.cookie }
    if (value.address === true) return { address: true }
  }
  fail(`routes: "${key}" sticky must be { header: 'name' }, { cookie: 'name' } or { address: true }`)
}

function fail (problem: string): never {
  throw new FST_ERR_HONO_INVALID_OPTION('migration', problem)
}
