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

/** Anything with a fetch handler: a Hono app, or another fetch-style app. */
export interface FetchApp {
  fetch (request: Request, env: FastifyHonoBindings, executionCtx?: undefined): Response | Promise<Response>
}
