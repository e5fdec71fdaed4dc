import type { FastifyInstance } from 'fastify'
import { mountView } from './app-view.js'
import { mountHandler, type MountHandler } from './handler.js'
import { misuseGuard } from './misuse.js'
import { keepTickObjectAlive } from './internals/tick-object.js'
import { documentMount } from './openapi.js'
import { beginClose, shutdownOf, waitForBackground } from './shutdown.js'
import { resolveOptions, type FastifyHonoOptions } from './options.js'
import type { DrainBounds } from './request/body.js'
import { closeIfTooLarge, closesOnParserError, passBodiesThrough } from './request/parser.js'
import { createMount } from './request/url.js'
import { listRoutes } from './route-list.js'
import { nameRoutes } from './route-name.js'
import { registerMountRoutes, type MountRoute } from './mount-routes.js'
import { installLightweightGlobals } from './web/globals.js'
import { mountWebSockets } from './ws/routing.js'
import { setupMigration } from './migration/index.js'
import type { BindingsUse } from './migration/bindings-use.js'

/**
 * Registers the mount: a passthrough body parser for this scope only, and
 * routes for the mount point and everything below it, for every method,
 * handled by handler.ts. Runs encapsulated, so the prefix applies and the
 * parent keeps its parsers. Async, so that an invalid option rejects
 * `register` (avvio does not catch a callback-style plugin's synchronous
 * throw: it becomes an uncaught exception).
 */
export async function fastifyHonoPlugin (fastify: FastifyInstance, options: FastifyHonoOptions): Promise<void> {
  const { stripPrefix, notFound, bodyLimit, overrideGlobalObjects, drainTimeout, drainLimit, openapi, websocket, routeName, closeTimeout, migration, ...resolved } = resolveOptions(options)
  const app = mountView(resolved.app, notFound)
  if (overrideGlobalObjects) installLightweightGlobals()
  keepTickObjectAlive()
  const mount = createMount(fastify.prefix, stripPrefix)
  const drain: DrainBounds = Object.freeze({ timeout: drainTimeout, limit: drainLimit })
  // `request.honoRoute`: the app's route path, behind the prefix unless the app sees it.
  const trackRoute = nameRoutes(fastify, app, stripPrefix ? fastify.prefix : '', routeName)
  // fastify.honoRoutes(), and the routes in a debug line.
  listRoutes(fastify, resolved.app, stripPrefix ? fastify.prefix : '')
  passBodiesThrough(fastify)

  // fastify.close(): event streams end, other streams and waitUntil work get until closeTimeout (shutdown.ts).
  const shutdown = shutdownOf(fastify.server, closeTimeout)
  fastify.addHook('preClose', (done) => { beginClose(shutdown); done() })
  fastify.addHook('onClose', () => waitForBackground(shutdown, fastify.log))

  // WebSockets: upgrades under the prefix routed through Fastify to the app.
  const accept = websocket === undefined ? undefined : mountWebSockets(fastify, websocket)

  // With the migration option, which Hono routes read c.env.request, reply or fastify (migration/bindings-use.ts).
  const bindingsUse: BindingsUse | undefined = migration === undefined ? undefined : new Map()
  // c.env.reply.send(), hijack() or code() in the app: a warning that says what to do (misuse.ts).
  const handler = mountHandler({ fastify, app, notFound, mount, drain, trackRoute, accept, shutdown, bindingsUse, misused: misuseGuard() })

  const route: MountRoute & { [kMountHandler]?: MountHandler } = {
    // HEAD is among the methods registered: Fastify's automatic HEAD route
    // would answer 500 for a handler that sends a Response (checked on 5.12.8).
    exposeHeadRoute: false,
    handler,
    // Out of @fastify/swagger's document, with the app's own paths in their place.
    config: documentMount(fastify, openapi, resolved.app, stripPrefix).config
  }
  if (bodyLimit !== undefined) route.bodyLimit = bodyLimit
  if (!closesOnParserError(fastify.version)) route.preParsing = closeIfTooLarge
  // @fastify/websocket, registered before the mount, wraps every later
  // route's handler in one that accepts upgrades itself (with its own
  // WebSocketServer, closing them at once on routes without a WebSocket
  // handler): the mount's routes keep their own, which decides per request.
  // This scope's onRoute hooks run after those inherited from above.
  route[kMountHandler] = handler
  fastify.addHook('onRoute', keepMountHandler)
  // The migration option's shares and mirrors, and fastify.honoMigration() (migration/).
  setupMigration({ fastify, app: resolved.app, view: app, mount, base: stripPrefix ? fastify.prefix : '', option: migration, route, bindingsUse })
  // `/prefix` itself, then `/prefix/` and everything below it, for the
  // methods no Fastify route holds there (lib/mount-routes.ts).
  registerMountRoutes(fastify, route)
}

const kMountHandler = Symbol('fastify-hono.mount-handler')

function keepMountHandler (route: { handler: unknown, [kMountHandler]?: MountHandler }): void {
  const handler = route[kMountHandler]
  if (handler !== undefined) route.handler = handler
}
