import type { FetchApp } from './bindings.js'
import { FST_ERR_HONO_INVALID_OPTION } from './errors.js'
import { isHonoApp } from './internals/hono.js'
import type { MigrationOption } from './migration/options.js'
import { checkOpenAPIOption, type OpenAPIOption } from './openapi.js'
import { DEFAULT_MAX_BUFFERED_AMOUNT, type WebSocketOption, type WebSocketServerLike } from './ws/types.js'

export interface FastifyHonoOptions {
  /** A Hono app, or any object with `fetch(request, env, executionCtx)`. */
  app: FetchApp
  /** The app sees paths relative to the mount point (default), or the full path (`false`, for `basePath` apps). */
  stripPrefix?: boolean
  /** Who answers a request that no Hono route matched: the Hono app (default) or Fastify's not-found handler. */
  notFound?: 'hono' | 'fastify'
  /** Largest request body in bytes; larger bodies answer 413. Defaults to the route's or instance's bodyLimit. */
  bodyLimit?: number
  /** Install the lightweight Request, Response and Headers as globals (default true). */
  overrideGlobalObjects?: boolean
  /**
   * How long, in milliseconds, the rest of a request body the app left
   * unread may keep arriving once the response has gone out (default 500).
   * Past that the connection is closed. See docs/request-bodies.md.
   */
  drainTimeout?: number
  /**
   * How many bytes of a request body the app left unread are read and
   * thrown away once the response has gone out, to keep the connection
   * (default 64 MiB). Past that the connection is closed; a declared length
   * already over it closes the connection after the response
   * (`Connection: close`). 0 closes it whenever a body is left unfinished.
   */
  drainLimit?: number
  /**
   * The app's OpenAPI 3 document, whose paths @fastify/swagger's document
   * includes under the mount's prefix: the document, a function that returns
   * it, or `true` for an app with `getOpenAPIDocument()` (@hono/zod-openapi).
   * The mount's own catch-all routes are never in that document.
   */
  openapi?: OpenAPIOption
  /**
   * WebSockets for the app's `upgradeWebSocket` routes (imported from
   * `fastify-hono/ws`): a `ws` WebSocketServer created with
   * `{ noServer: true }`, as @hono/node-server takes it. Upgrades under the
   * prefix are then routed through Fastify (hooks, log, routing) to the
   * app. See docs/websockets.md.
   */
  websocket?: WebSocketOption
  /**
   * Name each request the app routed after its Hono route (`/v2/users/:id`,
   * prefix included) for Fastify's tools: `request.routeOptions.url`, a
   * `route` on the request's log lines ("request completed"), @fastify/otel's
   * span (`http.route`, its name, the HTTP instrumentation's route) and so
   * fastify-metrics' route label. Default false. See docs/route-names.md.
   */
  routeName?: boolean
  /**
   * Milliseconds `fastify.close()` gives the mount's work in flight
   * (default 5000), counted from the moment the close begins: response
   * streams other than event streams may finish within it (event streams
   * end at once), and one still open then is cut so that its client can
   * tell; WebSockets get it for their close handshake (unless
   * `websocket.closeTimeout` says otherwise); `c.executionCtx.waitUntil()`
   * promises are awaited within it. Keep it below the grace a process
   * manager or close-with-grace gives. See docs/deployment.md.
   */
  closeTimeout?: number
  /**
   * Moving routes with proof: per route (`'GET /v2/users/:id'`, as clients
   * see it), mirror a sample of the Fastify route's requests through the
   * app's twin and compare the answers, or send a share of them to the twin
   * instead (`fastify.setHonoShare()` changes it at runtime). With the
   * option, `fastify.honoMigration()` also lists the Hono routes that read
   * `c.env.request`, `c.env.reply` or `c.env.fastify`. See docs/migration.md.
   */
  migration?: MigrationOption
}

/**
 * Every option of the plugin's own, by name: anything else passed to
 * `register`, other than Fastify's own register options, is refused.
 */
export const OPTION_NAMES = Object.freeze([
  'app', 'stripPrefix', 'notFound', 'bodyLimit', 'overrideGlobalObjects', 'drainTimeout', 'drainLimit', 'openapi', 'websocket', 'routeName', 'closeTimeout', 'migration'
] as const)

// Every key of FastifyHonoOptions must be in OPTION_NAMES: a compile error otherwise.
export const EVERY_OPTION_LISTED: [Exclude<keyof FastifyHonoOptions, typeof OPTION_NAMES[number]>] extends [never] ? true : never = true

/** The options Fastify's `register` itself reads (plugin-override.js, fastify 5.0 to 5.12.8). */
const REGISTER_OPTION_NAMES: readonly string[] = ['prefix', 'logLevel', 'logSerializers']

/** The defaults: as long and as much as @hono/node-server waits and reads (2.1.9). */
const DEFAULT_DRAIN_TIMEOUT = 500
const DEFAULT_DRAIN_LIMIT = 64 * 1024 * 1024
/** The close bound: what the WebSocket close handshake was given before, and half of close-with-grace's default delay. */
const DEFAULT_CLOSE_TIMEOUT = 5000

/** Largest delay setTimeout honours: a longer one fires at once, with a warning. */
const MAX_TIMEOUT = 2 ** 31 - 1

interface ResolvedOptions {
  app: FetchApp
  stripPrefix: boolean
  notFound: 'hono' | 'fastify'
  bodyLimit: number | undefined
  overrideGlobalObjects: boolean
  drainTimeout: number
  drainLimit: number
  openapi: OpenAPIOption | undefined
  websocket: { server: WebSocketServerLike, maxBufferedAmount: number, closeTimeout: number } | undefined
  routeName: boolean
  closeTimeout: number
  /** Checked where the prefix is known (migration/options.ts). */
  migration: MigrationOption | undefined
}

/** Checks the options once, at registration, and names the option that is wrong. */
export function resolveOptions (options: Partial<FastifyHonoOptions> | undefined): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new FST_ERR_HONO_INVALID_OPTION('app', 'is required: register(fastifyHono, { app })')
  }
  checkOptionNames(options)
  const {
    app, stripPrefix = true, notFound = 'hono', bodyLimit, overrideGlobalObjects = true,
    drainTimeout = DEFAULT_DRAIN_TIMEOUT, drainLimit = DEFAULT_DRAIN_LIMIT, openapi, websocket, routeName = false,
    closeTimeout = DEFAULT_CLOSE_TIMEOUT, migration
  } = options
  if (app === undefined || app === null) {
    throw new FST_ERR_HONO_INVALID_OPTION('app', 'is required: pass a Hono app or an object with a fetch(request) method')
  }
  if (typeof (app as Partial<FetchApp>).fetch !== 'function') {
    throw new FST_ERR_HONO_INVALID_OPTION('app', 'must be a Hono app or an object with a fetch(request) method')
  }
  if (typeof stripPrefix !== 'boolean') {
    throw new FST_ERR_HONO_INVALID_OPTION('stripPrefix', `must be a boolean, got ${JSON.stringify(stripPrefix)}`)
  }
  if (notFound !== 'hono' && notFound !== 'fastify') {
    throw new FST_ERR_HONO_INVALID_OPTION('notFound', `must be 'hono' or 'fastify', got ${JSON.stringify(notFound)}`)
  }
  if (notFound === 'fastify' && !isHonoApp(app)) {
    throw new FST_ERR_HONO_INVALID_OPTION('notFound', "'fastify' needs a Hono app, to tell unmatched requests apart")
  }
  if (bodyLimit !== undefined && !(Number.isInteger(bodyLimit) && bodyLimit > 0)) {
    throw new FST_ERR_HONO_INVALID_OPTION('bodyLimit', `must be a positive integer, got ${JSON.stringify(bodyLimit)}`)
  }
  if (typeof overrideGlobalObjects !== 'boolean') {
    throw new FST_ERR_HONO_INVALID_OPTION('overrideGlobalObjects', `must be a boolean, got ${JSON.stringify(overrideGlobalObjects)}`)
  }
  if (!(Number.isInteger(drainTimeout) && drainTimeout >= 0 && drainTimeout <= MAX_TIMEOUT)) {
    throw new FST_ERR_HONO_INVALID_OPTION('drainTimeout', `must be an integer number of milliseconds from 0 to ${MAX_TIMEOUT}, got ${printedValue(drainTimeout)}`)
  }
  if (!(Number.isSafeInteger(drainLimit) && drainLimit >= 0)) {
    throw new FST_ERR_HONO_INVALID_OPTION('drainLimit', `must be a non-negative integer number of bytes, got ${printedValue(drainLimit)}`)
  }
  if (typeof routeName !== 'boolean') {
    throw new FST_ERR_HONO_INVALID_OPTION('routeName', `must be a boolean, got ${JSON.stringify(routeName)}`)
  }
  if (!(Number.isInteger(closeTimeout) && closeTimeout >= 0 && closeTimeout <= MAX_TIMEOUT)) {
    throw new FST_ERR_HONO_INVALID_OPTION('closeTimeout', `must be an integer number of milliseconds from 0 to ${MAX_TIMEOUT}, got ${printedValue(closeTimeout)}`)
  }
  checkOpenAPIOption(openapi, app)
  return { app, stripPrefix, notFound, bodyLimit, overrideGlobalObjects, drainTimeout, drainLimit, openapi, websocket: checkWebSocketOption(websocket, closeTimeout), routeName, closeTimeout, migration }
}

/**
 * Refuses a name neither the plugin nor Fastify's `register` knows, so that
 * `{ app, prefx: '/v2' }` does not mount the app at the root without a word.
 */
function checkOptionNames (options: object): void {
  for (const name of Object.keys(options)) {
    if ((OPTION_NAMES as readonly string[]).includes(name) || REGISTER_OPTION_NAMES.includes(name)) continue
    const near = [...OPTION_NAMES, ...REGISTER_OPTION_NAMES].find((known) => closeTo(name, known))
    throw new FST_ERR_HONO_INVALID_OPTION(name, `is not an option of fastify-hono nor of Fastify's register${near === undefined ? '' : `: did you mean "${near}"?`}`)
  }
}

/** Whether two names are at most two single-character edits apart (a typo), case aside. */
function closeTo (a: string, b: string): boolean {
  a = a.toLowerCase()
  b = b.toLowerCase()
  if (Math.abs(a.length - b.length) > 2) return false
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length] <= 2
}

/** A value as an error message shows it: numbers as they print (NaN, Infinity), the rest as JSON. */
function printedValue (value: unknown): string {
  return typeof value === 'number' ? String(value) : JSON.stringify(value)
}

function checkWebSocketOption (websocket: WebSocketOption | undefined, closeTimeout: number): ResolvedOptions['websocket'] {
  if (websocket === undefined) return undefined
  if (websocket === null || typeof websocket !== 'object') {
    throw new FST_ERR_HONO_INVALID_OPTION('websocket', 'must be an object: { server: new WebSocketServer({ noServer: true }) }')
  }
  const { server, maxBufferedAmount = DEFAULT_MAX_BUFFERED_AMOUNT, closeTimeout: wsCloseTimeout = closeTimeout } = websocket
  if (server === null || typeof server !== 'object' || typeof server.handleUpgrade !== 'function' || typeof server.on !== 'function') {
    throw new FST_ERR_HONO_INVALID_OPTION('websocket', 'needs server: a ws WebSocketServer created with { noServer: true }')
  }
  if (server.options?.noServer !== true) {
    throw new FST_ERR_HONO_INVALID_OPTION('websocket', 'needs a WebSocketServer created with { noServer: true }: Fastify routes the upgrades')
  }
  if (!(maxBufferedAmount === Infinity || (Number.isSafeInteger(maxBufferedAmount) && maxBufferedAmount > 0))) {
    throw new FST_ERR_HONO_INVALID_OPTION('websocket', `maxBufferedAmount must be a positive integer number of bytes or Infinity, got ${printedValue(maxBufferedAmount)}`)
  }
  if (!(Number.isInteger(wsCloseTimeout) && wsCloseTimeout >= 0 && wsCloseTimeout <= MAX_TIMEOUT)) {
    throw new FST_ERR_HONO_INVALID_OPTION('websocket', `closeTimeout must be an integer number of milliseconds from 0 to ${MAX_TIMEOUT}, got ${printedValue(wsCloseTimeout)}`)
  }
  return { server, maxBufferedAmount, closeTimeout: wsCloseTimeout }
}
