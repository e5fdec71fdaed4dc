import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorCodes } from 'fastify'
import type { FastifyHonoBindings, FetchApp } from './bindings.js'
import { FST_ERR_HONO_INVALID_RESPONSE } from './errors.js'
import { wasUnmatched } from './app-view.js'
import { isHttp2 } from './internals/node.js'
import { MountExecutionContext } from './execution-context.js'
import { TrackedBindings, type BindingsUse } from './migration/bindings-use.js'
import { closeConnectionIfClosing, type ServerShutdown } from './shutdown.js'
import { writeResponse } from './reply/way-out.js'
import type { DrainBounds, RequestBody } from './request/body.js'
import { appErrorToFastify } from './request/body-errors.js'
import { bridgeRequest, requestBody } from './request/bridge.js'
import type { Mount } from './request/url.js'
import { lightweightGlobalsInstalled } from './web/globals.js'
import { asResponse } from './web/response.js'
import { endSocketSoon } from './internals/incoming.js'
import { upgradeOf, type AcceptOptions } from './ws/routing.js'
import { acceptUpgrade, offerWebSocket } from './ws/session.js'

/** What one mount's requests are handled with, fixed at registration. */
interface MountContext {
  readonly fastify: FastifyInstance
  /** The app, seen through mountView (app-view.ts). */
  readonly app: FetchApp
  readonly notFound: 'hono' | 'fastify'
  readonly mount: Mount
  readonly drain: DrainBounds
  /** Sets `request.honoRoute` (route-name.ts), and names the request with the routeName option. */
  readonly trackRoute: (request: FastifyRequest, reply: FastifyReply) => void
  /** Warns about c.env.reply.send(), hijack() or code() in the app; true when the reply is already gone (misuse.ts). */
  readonly misused: (request: FastifyRequest, reply: FastifyReply, response: Response) => boolean
  /** Set on a mount with WebSockets. */
  readonly accept: AcceptOptions | undefined
  /** The server's close state: what `c.executionCtx.waitUntil()` hands its promises to. */
  readonly shutdown: ServerShutdown
  /** With the migration option: `c.env` notes which bindings each Hono route reads (migration/bindings-use.ts). */
  readonly bindingsUse: BindingsUse | undefined
}

export type MountHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | FastifyReply | undefined

/**
 * The route handler of a mount: builds the app's Request, calls the app,
 * and hands its Response to the way out (reply/way-out.ts). One function per
 * mount, made at registration.
 */
export function mountHandler (context: MountContext): MountHandler {
  return function handleRequest (request, reply) {
    // An upgrade request (Node sets `upgrade` on those alone) that Fastify routed.
    if ((request.raw as { upgrade?: boolean }).upgrade === true) return handleUpgrade(context, request, reply)
    const body = requestBody(request, context.drain)
    // Lightweight requests only while the global Request is ours: the app may
    // pass c.req.raw to `new Request()`, which must accept it.
    const appRequest = bridgeRequest(request, reply, context.mount, body, lightweightGlobalsInstalled())
    const env: FastifyHonoBindings = context.bindingsUse === undefined
      ? { incoming: request.raw, outgoing: reply.raw, request, reply, fastify: context.fastify }
      : new TrackedBindings(request, reply, context.fastify, reply.raw, context.bindingsUse) as FastifyHonoBindings
    let result: unknown
    context.trackRoute(request, reply)
    try {
      result = context.app.fetch(appRequest, env, new MountExecutionContext(context.shutdown, request.log))
    } catch (err) {
      // A synchronous throw reaches Fastify's error handler like a rejection.
      body?.afterApp(reply)
      throw err
    }
    // Hono returns the Response itself when no handler awaited anything:
    // then the whole request completes without a promise.
    if (typeof (result as Promise<unknown> | null)?.then === 'function') {
      return (result as Promise<unknown>).then(
        (response) => respond(context, request, reply, env, body, response),
        (err: unknown) => {
          body?.afterApp(reply)
          throw tooLarge(request, reply, body) ?? appErrorToFastify(err, request, body)
        })
    }
    return respond(context, request, reply, env, body, result)
  }
}

/**
 * An upgrade: the app sees it with `outgoing` undefined, and, on a mount
 * with WebSockets, the state the helper of fastify-hono/ws fills in. If the
 * helper accepted it and the answer is still its 200, the handshake
 * follows; any other answer goes out over HTTP on the socket, which then
 * closes.
 */
async function handleUpgrade (context: MountContext, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const { accept } = context
  const upgrade = upgradeOf(request.raw)
  const appRequest = bridgeRequest(request, reply, context.mount, null, lightweightGlobalsInstalled())
  const env: FastifyHonoBindings = context.bindingsUse === undefined
    ? { incoming: request.raw, outgoing: undefined, request, reply, fastify: context.fastify }
    : new TrackedBindings(request, reply, context.fastify, undefined, context.bindingsUse) as FastifyHonoBindings
  const state = accept !== undefined && upgrade !== undefined ? offerWebSocket(env) : undefined
  context.trackRoute(request, reply)
  const response = await context.app.fetch(appRequest, env, new MountExecutionContext(context.shutdown, request.log))
  const appResponse = validResponse(response)
  if (state?.requested === true && appResponse.status === 200) {
    acceptUpgrade(request, reply, state, upgrade!, appResponse, accept!)
    return undefined
  }
  // Answered over HTTP: the socket closes after it.
  if (upgrade !== undefined) reply.raw.once('finish', () => { endSocketSoon(upgrade.socket) })
  return respond(context, request, reply, env, null, appResponse)
}

function respond (context: MountContext, request: FastifyRequest, reply: FastifyReply, env: FastifyHonoBindings, body: RequestBody | null, response: unknown): Promise<FastifyReply | undefined> | FastifyReply | undefined {
  body?.afterApp(reply)
  const limitError = tooLarge(request, reply, body)
  if (limitError !== undefined) throw limitError
  const appResponse = validResponse(response)
  if (context.misused(request, reply, appResponse)) return reply
  if (context.notFound === 'fastify' && wasUnmatched(env)) {
    reply.callNotFound()
    return reply
  }
  closeConnectionIfClosing(reply)
  return writeResponse(request, reply, appResponse)
}

/** The app's answer as a Response: one from another fetch implementation comes back as a native one. */
function validResponse (response: unknown): Response {
  const appResponse = asResponse(response)
  if (appResponse === undefined) throw new FST_ERR_HONO_INVALID_RESPONSE(response === null ? 'null' : typeof response)
  return appResponse
}

/**
 * The 413 for a body that went past the limit while the app read it, whatever
 * the app made of the read error (a 500 from Hono's onError, or the error
 * rethrown); the rest of the body is still on the wire, so the connection
 * closes after it.
 */
function tooLarge (request: FastifyRequest, reply: FastifyReply, body: RequestBody | null): Error | undefined {
  if (body === null || !body.exceeded) return undefined
  if (!isHttp2(request.raw)) reply.header('connection', 'close')
  return new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()
}
