import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * What a mounted Hono app finds in `c.env`. `incoming` and `outgoing` carry the
 * same names as @hono/node-server's HttpBindings, so its helpers (getConnInfo,
 * …) work unchanged; `request`, `reply` and `fastify` are Fastify's own.
 */
// A type alias, not an interface: Hono before 4.5.0 constrains Bindings to
// Record<string, unknown>, which an interface (no index signature) fails.
export type FastifyHonoBindings = {
  incoming: IncomingMessage | Http2ServerRequest
  /** The raw response; undefined while the request is a WebSocket upgrade (as on @hono/node-server). */
  outgoing: ServerResponse | Http2ServerResponse | undefined
  request: FastifyRequest
  reply: FastifyReply
  fastify: FastifyInstance
}

/** Fastify's side of a request, the same on every kind of request. */
type FastifyBindings = {
  request: FastifyRequest
  reply: FastifyReply
  fastify: FastifyInstance
}

/** `c.env` on an HTTP/1 server: the raw pair @hono/node-server's HttpBindings names. */
export type FastifyHonoHttp1Bindings = FastifyBindings & {
  incoming: IncomingMessage
  outgoing: ServerResponse
}

/** `c.env` on an HTTP/2 server (`http2: true`): the raw pair @hono/node-server's Http2Bindings names. */
export type FastifyHonoHttp2Bindings = FastifyBindings & {
  incoming: Http2ServerRequest
  outgoing: Http2ServerResponse
}

/**
 * `c.env` while the request is a WebSocket upgrade (the context an
 * `upgradeWebSocket` route's callback gets for the handshake): there is no
 * HTTP response yet, so `outgoing` is undefined, as on @hono/node-server.
 */
export type FastifyHonoUpgradeBindings = FastifyBindings & {
  incoming: IncomingMessage
  outgoing: undefined
}

/** The HTTP versions `FastifyHonoEnv` can be narrowed to. */
export type FastifyHonoHttpVersion = 'http1' | 'http2'

/**
 * A ready-made Hono Env for a mounted app: `new Hono<FastifyHonoEnv>()`
 * types `c.env`. `outgoing` is the raw response, never undefined: an
 * ordinary request always has one (only an upgrade has none: type those
 * contexts with `FastifyHonoUpgradeEnv`). Narrow to the server's HTTP
 * version for the exact classes: `FastifyHonoEnv<'http1'>` gives
 * `IncomingMessage` and `ServerResponse` (what Fastify serves unless created
 * with `http2: true`), `FastifyHonoEnv<'http2'>` the HTTP/2 compatibility
 * classes; the default is either, told apart by the bindings themselves.
 */
export type FastifyHonoEnv<Version extends FastifyHonoHttpVersion = FastifyHonoHttpVersion> = {
  Bindings: Version extends 'http1' ? FastifyHonoHttp1Bindings : FastifyHonoHttp2Bindings
}

/** The Env of an upgrade context (`c.env.outgoing` undefined): see FastifyHonoUpgradeBindings. */
export type FastifyHonoUpgradeEnv = {
  Bindings: FastifyHonoUpgradeBindings
}

/**
 * What a mounted app gets as `c.executionCtx` (the third argument of
 * `fetch`), in the shape of Hono's ExecutionContext. `waitUntil(promise)`
 * keeps work going after the response: `fastify.close()` waits for it within
 * the `closeTimeout` option, and a rejection is logged with the request id.
 * `passThroughOnException()` does nothing: there is no origin behind the
 * mount, and an error the app does not handle reaches Fastify's error
 * handler. `props` is an empty object.
 */
export interface FastifyHonoExecutionContext {
  waitUntil (promise: Promise<unknown>): void
  passThroughOnException (): void
  props: Record<string, unknown>
}

/** Anything with a fetch handler: a Hono app, or another fetch-style app. */
export interface FetchApp {
  fetch (request: Request, env: FastifyHonoBindings, executionCtx: FastifyHonoExecutionContext): Response | Promise<Response>
}
