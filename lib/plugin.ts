import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify'
import { errorCodes } from 'fastify'
import type { FastifyHonoBindings } from './bindings.js'
import { FST_ERR_HONO_INVALID_RESPONSE } from './errors.js'
import { mountView, wasUnmatched } from './app-view.js'
import { misuseGuard } from './misuse.js'
import { documentMount } from './openapi.js'
import { resolveOptions, type FastifyHonoOptions } from './options.js'
import { keepTickObjectAlive } from './internals/tick-object.js'
import { closeConnectionIfClosing, endOpenStreams } from './reply/open-streams.js'
import { writeResponse } from './reply/way-out.js'
import type { DrainBounds, RequestBody } from './request/body.js'
import { appErrorToFastify } from './request/body-errors.js'
import { bridgeRequest, requestBody } from './request/bridge.js'
import { createMount } from './request/url.js'
import { listRoutes } from './route-list.js'
import { nameRoutes } from './route-name.js'
import { registerMountRoutes, type MountRoute } from './routes.js'
import { installLightweightGlobals, lightweightGlobalsInstalled } from './web/globals.js'
import { asResponse } from './web/response.js'
import { acceptUpgrade, closeWebSockets, endSocket, kUpgradeState, routeUpgrades, upgradeOf, type AcceptOptions, type UpgradeState } from './ws/server.js'

/**
 * Registers the mount: a passthrough body parser for this scope only, and
 * routes for the mount point and everything below it, for every method.
 * Runs encapsulated, so the prefix applies and the parent keeps its parsers.
 * Async, so that an invalid option rejects `register` (avvio does not catch a
 * callback-style plugin's synchronous throw: it becomes an uncaught exception).
 */
export async function fastifyHonoPlugin (fastify: FastifyInstance, options: FastifyHonoOptions): Promise<void> {
  const { stripPrefix, notFound, bodyLimit, overrideGlobalObjects, drainTimeout, drainLimit, openapi, websocket, routeName, ...resolved } = resolveOptions(options)
  const app = mountView(resolved.app, notFound)
  if (overrideGlobalObjects) installLightweightGlobals()
  keepTickObjectAlive()
  const mount = createMount(fastify.prefix, stripPrefix)
  const drain: DrainBounds = Object.freeze({ timeout: drainTimeout, limit: drainLimit })
  // `request.honoRoute`: the app's route path, behind the prefix unless the app sees it.
  const trackRoute = nameRoutes(fastify, app, stripPrefix ? fastify.prefix : '', routeName)
  // fastify.honoRoutes(), and the routes in a debug line.
  listRoutes(fastify, resolved.app, stripPrefix ? fastify.prefix : '')
  // c.env.reply.send(), hijack() or code() in the app: a warning that says what to do.
  const misused = misuseGuard()

  // The app reads the body itself, in any format: hand it the stream untouched.
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('*', passthroughBody)
  // The same parser under the common media types: Fastify 5.12 caches the
  // parser it finds for a Content-Type, except the catch-all, which costs a
  // Content-Type parse on every request that has a body.
  fastify.addContentTypeParser(COMMON_MEDIA_TYPES, passthroughBody)

  // On close, the streams the mounts are writing end (lib/reply/open-streams.ts).
  fastify.addHook('preClose', (done) => { endOpenStreams(fastify.server); done() })

  // WebSockets: upgrades under the prefix routed through Fastify to the app.
  let accept: AcceptOptions | undefined
  if (websocket !== undefined) {
    const registry = routeUpgrades(fastify, fastify.prefix)
    accept = { registry, server: websocket.server, maxBufferedAmount: websocket.maxBufferedAmount }
    fastify.addHook('preClose', () => closeWebSockets(registry, fastify.server, websocket.closeTimeout))
  }

  function handleRequest (request: FastifyRequest, reply: FastifyReply): Promise<unknown> | FastifyReply | undefined {
    // An upgrade request (Node sets `upgrade` on those alone) that Fastify routed.
    if ((request.raw as { upgrade?: boolean }).upgrade === true) return handleUpgrade(request, reply)
    const body = requestBody(request, drain)
    // Lightweight requests only while the global Request is ours: the app may
    // pass c.req.raw to `new Request()`, which must accept it.
    const appRequest = bridgeRequest(request, reply, mount, body, lightweightGlobalsInstalled())
    const env: FastifyHonoBindings = { incoming: request.raw, outgoing: reply.raw, request, reply, fastify }
    let result: unknown
    trackRoute(request, reply)
    try {
      result = app.fetch(appRequest, env)
    } catch (err) {
      // A synchronous throw reaches Fastify's error handler like a rejection.
      body?.afterApp(reply)
      throw err
    }
    // Hono returns the Response itself when no handler awaited anything:
    // then the whole request completes without a promise.
    if (typeof (result as Promise<unknown> | null)?.then === 'function') {
      return (result as Promise<unknown>).then(
        (response) => respond(request, reply, env, body, response),
        (err: unknown) => {
          body?.afterApp(reply)
          throw tooLarge(request, reply, body) ?? appErrorToFastify(err, request, body)
        })
    }
    return respond(request, reply, env, body, result)
  }

  /**
   * An upgrade: the app sees it with `outgoing` undefined, and, on a mount
   * with WebSockets, the state the helper of fastify-hono/ws fills in. If the
   * helper accepted it and the answer is still its 200, the handshake
   * follows; any other answer goes out over HTTP on the socket, which then
   * closes.
   */
  async function handleUpgrade (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const upgrade = upgradeOf(request.raw)
    const appRequest = bridgeRequest(request, reply, mount, null, lightweightGlobalsInstalled())
    const state: UpgradeState = { requested: false, events: undefined, onError: undefined, url: '' }
    const env: FastifyHonoBindings = { incoming: request.raw, outgoing: undefined, request, reply, fastify }
    if (accept !== undefined && upgrade !== undefined) (env as unknown as Record<symbol, UpgradeState>)[kUpgradeState] = state
    trackRoute(request, reply)
    const response = await app.fetch(appRequest, env)
    const appResponse = asResponse(response)
    if (appResponse === undefined) throw new FST_ERR_HONO_INVALID_RESPONSE(response === null ? 'null' : typeof response)
    if (state.requested && appResponse.status === 200 && accept !== undefined && upgrade !== undefined) {
      acceptUpgrade(request, reply, state, upgrade, appResponse, accept)
      return undefined
    }
    // Answered over HTTP: the socket closes after it.
    if (upgrade !== undefined) reply.raw.once('finish', () => { endSocket(upgrade.socket) })
    return respond(request, reply, env, null, appResponse)
  }

  function respond (request: FastifyRequest, reply: FastifyReply, env: FastifyHonoBindings, body: RequestBody | null, response: unknown): Promise<FastifyReply | undefined> | FastifyReply | undefined {
    body?.afterApp(reply)
    const limitError = tooLarge(request, reply, body)
    if (limitError !== undefined) throw limitError
    // A Response from another fetch implementation comes back as a native one.
    const appResponse = asResponse(response)
    if (appResponse === undefined) throw new FST_ERR_HONO_INVALID_RESPONSE(response === null ? 'null' : typeof response)
    if (misused(request, reply, appResponse)) return reply
    if (notFound === 'fastify' && wasUnmatched(env)) {
      reply.callNotFound()
      return reply
    }
    closeConnectionIfClosing(reply)
    return writeResponse(request, reply, appResponse)
  }

  const route: MountRoute = {
    // HEAD is among the methods registered: Fastify's automatic HEAD route
    // would answer 500 for a handler that sends a Response (checked on 5.12.8).
    exposeHeadRoute: false,
    handler: handleRequest,
    // Out of @fastify/swagger's document, with the app's own paths in their place.
    config: documentMount(fastify, openapi, resolved.app, stripPrefix).config
  }
  if (bodyLimit !== undefined) route.bodyLimit = bodyLimit
  // Fastify adds `Connection: close` to a body parser's error only from 5.5.0:
  // before, the 413 for a declared length over the limit kept the connection
  // and the server read the whole body. Only there, a hook sets it first.
  if (!closesOnParserError(fastify.version)) route.preParsing = closeIfTooLarge
  // @fastify/websocket, registered before the mount, wraps every later
  // route's handler in one that accepts upgrades itself (with its own
  // WebSocketServer, closing them at once on routes without a WebSocket
  // handler): the mount's routes keep their own, which decides per request.
  // This scope's onRoute hooks run after those inherited from above.
  ;(route as Record<symbol, unknown>)[kMountHandler] = handleRequest
  fastify.addHook('onRoute', keepMountHandler)
  // `/prefix` itself, then `/prefix/` and everything below it, for the
  // methods no Fastify route holds there (lib/routes.ts).
  registerMountRoutes(fastify, route)
}

/**
 * The 413 for a body that went past the limit while the app read it, whatever
 * the app made of the read error (a 500 from Hono's onError, or the error
 * rethrown); the rest of the body is still on the wire, so the connection
 * closes after it.
 */
function tooLarge (request: FastifyRequest, reply: FastifyReply, body: RequestBody | null): Error | undefined {
  if (body === null || !body.exceeded) return undefined
  if (request.raw.httpVersionMajor === 1) reply.header('connection', 'close')
  return new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()
}

const kMountHandler = Symbol('fastify-hono.mount-handler')

function keepMountHandler (route: { handler: unknown }): void {
  const handler = (route as Record<symbol, unknown>)[kMountHandler]
  if (handler !== undefined) route.handler = handler
}

const COMMON_MEDIA_TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/octet-stream']

/** Whether Fastify itself sends `Connection: close` with a body parser's error (5.5.0 and later). */
function closesOnParserError (version: string): boolean {
  const [major, minor] = version.split('.').map(Number)
  return !(major === 5 && minor < 5)
}

function declaredTooLarge (request: FastifyRequest): boolean {
  const declared = request.headers['content-length']
  return declared !== undefined && Number(declared) > (request.routeOptions.bodyLimit ?? Infinity)
}

const closeIfTooLarge: preParsingHookHandler = (request, reply, payload, done) => {
  if (request.raw.httpVersionMajor === 1 && declaredTooLarge(request)) reply.header('connection', 'close')
  done(null, payload)
}

function passthroughBody (request: FastifyRequest, payload: unknown, done: (err: Error | null, body?: unknown) => void): void {
  // Refuse at once what the declared length already puts over the limit.
  if (declaredTooLarge(request)) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
    return
  }
  done(null, payload)
}
