import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type {
  FastifyHonoBindings as Bindings, FastifyHonoEnv as Env, FastifyHonoExecutionContext as ExecutionContext, FastifyHonoHttp1Bindings as Http1Bindings,
  FastifyHonoHttp2Bindings as Http2Bindings, FastifyHonoHttpVersion as HttpVersion,
  FastifyHonoUpgradeBindings as UpgradeBindings, FastifyHonoUpgradeEnv as UpgradeEnv, FetchApp as App
} from './bindings.js'
import type { OpenAPIDocument as Document, OpenAPITarget as Target } from './openapi.js'
import type { FastifyHonoOptions as Options } from './options.js'
import type { HonoRouteInfo as RouteInfo } from './route-list.js'
import type { HonoMigrationRoute as MigrationRoute } from './migration/report.js'
import type { MigrationOption as Migration, MigrationRouteOption as MigrationRouteOptions, MirrorOption as Mirror } from './migration/options.js'
import { fastifyHonoPlugin } from './plugin.js'

/** The Fastify plugin that serves a Hono app (or any fetch app) under a prefix. */
function fastifyHono (fastify: FastifyInstance, options: Options): Promise<void> {
  return fastifyHonoPlugin(fastify, options)
}

// fastify-plugin marks the function itself and sets its `default` and
// `fastifyHono` properties, which the namespace below declares.
fp(fastifyHono, {
  // The peer range (package.json), which Fastify checks against its version
  // at register(). `^6.0.0-0` rather than `6.x`: Fastify compares without
  // prereleases unless its own version matches -rc, -pre or -alpha, so `6.x`
  // would refuse a 6.0.0-beta (docs/versions.md).
  fastify: '^5.0.0 || ^6.0.0-0',
  name: 'fastify-hono',
  // Keep the scope: the prefix applies and the passthrough body parser stays inside it.
  encapsulate: true
})

type FastifyHonoPlugin = typeof fastifyHono

// Declared, not emitted: the types, and the properties fastify-plugin set.
// With `export =` below, the declarations take the shape of the @fastify/*
// plugins' (a function and a namespace of the same name), which every
// import form understands: `import x = require()`, `require()`, and default
// or named imports.
declare namespace fastifyHono {
  export type FastifyHonoOptions = Options
  export type FastifyHonoBindings = Bindings
  export type FastifyHonoEnv<Version extends HttpVersion = HttpVersion> = Env<Version>
  export type FastifyHonoHttpVersion = HttpVersion
  export type FastifyHonoExecutionContext = ExecutionContext
  export type FastifyHonoHttp1Bindings = Http1Bindings
  export type FastifyHonoHttp2Bindings = Http2Bindings
  export type FastifyHonoUpgradeBindings = UpgradeBindings
  export type FastifyHonoUpgradeEnv = UpgradeEnv
  export type FetchApp = App
  export type OpenAPIDocument = Document
  export type OpenAPITarget = Target
  export type HonoRouteInfo = RouteInfo
  export type HonoMigrationRoute = MigrationRoute
  export type MigrationOption = Migration
  export type MigrationRouteOption = MigrationRouteOptions
  export type MirrorOption = Mirror
  export const fastifyHono: FastifyHonoPlugin
  export { fastifyHono as default }
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The routes of every mounted Hono app, as they are now, prefix
     * included (`{ method: 'GET', url: '/v2/users/:id', prefix: '/v2' }`):
     * what `printRoutes()` shows only as the mount's `/v2/*`. Middleware is
     * left out. Defined once a mount is registered.
     */
    honoRoutes (): RouteInfo[]
    /**
     * Where the migration stands: every route of the server as Fastify
     * only, Hono only or both; for a route with a share, the share and
     * where requests went; for a mirrored one, the compared, matched,
     * mismatched, errored and skipped counts and each side's latency; for a
     * Hono route on a mount with the `migration` option, the Fastify
     * bindings it reads. Fastify routes are seen from the first mount's
     * registration on (and, at a Hono route's path, before it). Defined once
     * a mount is registered.
     */
    honoMigration (): MigrationRoute[]
    /** `honoMigration()` as a table, as `printRoutes()` prints the router. */
    printHonoMigration (): string
    /** Changes a route's share (percent to Hono, 0–100) at once: `setHonoShare('GET /v2/users/:id', 25)`. */
    setHonoShare (route: string, percent: number): void
  }
  interface FastifyRequest {
    /**
     * On a request a mounted Hono app routed: the path of the Hono route
     * whose handler it reached, prefix included (`/v2/users/:id`), where
     * `routeOptions.url` says `/v2/*`. Undefined before the app has routed
     * the request, when only middleware or nothing matched (Hono's not-found),
     * for a fetch app that is not Hono, and on other routes.
     */
    readonly honoRoute: string | undefined
  }
}

// require('fastify-hono') returns the plugin itself, as with @fastify/* plugins.
export = fastifyHono
