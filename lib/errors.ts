import createError from '@fastify/error'

// Every error the plugin raises itself, built with @fastify/error as
// Fastify's own are: each carries a `code` and a `statusCode`, so Fastify's
// error handler answers with that status and logs it like any route error.

/** A registration option is invalid: `register` rejects with it, naming the option. */
export const FST_ERR_HONO_INVALID_OPTION = createError<'FST_ERR_HONO_INVALID_OPTION', 500, [option: string, problem: string]>(
  'FST_ERR_HONO_INVALID_OPTION', 'fastify-hono: option "%s" %s', 500, TypeError)

/** The request cannot be turned into a valid fetch `Request` (bad Host, bad target, bad header): 400. */
export const FST_ERR_HONO_BAD_REQUEST = createError<'FST_ERR_HONO_BAD_REQUEST', 400, [problem: string, options?: { cause: unknown }]>(
  'FST_ERR_HONO_BAD_REQUEST', '%s', 400)

/** The app's fetch returned (or resolved to) something that is not a Response: 500. */
export const FST_ERR_HONO_INVALID_RESPONSE = createError<'FST_ERR_HONO_INVALID_RESPONSE', 500, [kind: string]>(
  'FST_ERR_HONO_INVALID_RESPONSE', 'app.fetch() must return a Response, got %s', 500)

/** The app called fastify-hono/ws's upgradeWebSocket on a mount registered without the `websocket` option: 500. */
export const FST_ERR_HONO_WEBSOCKET_DISABLED = createError<'FST_ERR_HONO_WEBSOCKET_DISABLED', 500>(
  'FST_ERR_HONO_WEBSOCKET_DISABLED', 'fastify-hono: upgradeWebSocket needs the mount\'s websocket option: register(fastifyHono, { app, websocket: { server: new WebSocketServer({ noServer: true }) } })', 500)
