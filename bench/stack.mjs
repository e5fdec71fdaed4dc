// The "production stack": the plugins a typical Fastify service registers on
// every route, and the nearest Hono middleware for @hono/node-server.
//
// Fastify: @fastify/cookie (an onRequest hook parsing Cookie, and an onSend
// hook writing cookies set with reply.setCookie), @fastify/compress (an
// onSend hook on every route, added through onRoute), @fastify/helmet (an
// onRequest hook running Express's helmet() on reply.raw: a dozen headers
// set with the raw response's setHeader(), not reply.header()),
// @fastify/cors (an onRequest hook) and @fastify/rate-limit (an onRequest
// hook per route, added through onRoute, setting three x-ratelimit-*
// headers with reply.header()). The two onSend hooks (cookie, compress)
// keep a mounted Hono response off fastify-hono's fast writer, today; the
// headers the onRequest hooks set are merged into its head.
//
// Hono: hono/secure-headers (helmet), hono/cors (@fastify/cors) and
// hono/compress (@fastify/compress). Nothing in hono's core counts requests
// the way @fastify/rate-limit does, and hono/cookie is a set of helpers to
// read and write cookies in a handler, not a middleware that parses every
// request: those two have no counterpart there.
//
// The load generator sends no Accept-Encoding (none of the suite's
// requests do): every body these cases serve is below the 1,024-byte
// threshold of both compress plugins, so @fastify/compress would not
// compress any of them anyway, while hono/compress checks its threshold only
// against a Content-Length header, which c.text() and c.json() do not set,
// and would gzip even the 13-byte text body. Without the header, every
// variant sends the same bytes, and @fastify/compress's onSend hook still
// runs on every response.
import fastifyCompress from '@fastify/compress'
import fastifyCookie from '@fastify/cookie'
import fastifyCors from '@fastify/cors'
import fastifyHelmet from '@fastify/helmet'
import fastifyRateLimit from '@fastify/rate-limit'
import { Hono } from 'hono'
import { compress } from 'hono/compress'
import { cors } from 'hono/cors'
import { secureHeaders } from 'hono/secure-headers'

// Far above what any run sends in a minute from the one client address:
// the limit is counted on every request and never reached.
const RATE_LIMIT = { max: 1e9, timeWindow: 60_000 }

/**
 * Registers the stack on a Fastify instance, before its routes (compress and
 * rate-limit attach their hooks to routes declared after them). With
 * `onSend: false`, only the plugins that set headers from onRequest hooks
 * (helmet, cors, rate-limit): no onSend hook.
 */
export async function registerStack (fastify, { onSend = true } = {}) {
  if (onSend) {
    await fastify.register(fastifyCookie)
    await fastify.register(fastifyCompress)
  }
  await fastify.register(fastifyHelmet)
  await fastify.register(fastifyCors)
  await fastify.register(fastifyRateLimit, RATE_LIMIT)
}

/** A Hono app with the nearest Hono middleware in front of `app`, mounted at `prefix`. */
export function honoStack (app, prefix) {
  return new Hono()
    .use('*', secureHeaders(), cors(), compress())
    .route(prefix, app)
}
