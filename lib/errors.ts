import createError from '@fastify/error'
import { errorCodes } from 'fastify'

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

/** A request body the app read could not be parsed (malformed multipart or urlencoded form): 400. */
export const FST_ERR_HONO_INVALID_BODY = createError<'FST_ERR_HONO_INVALID_BODY', 400, [problem: string, options?: { cause: unknown }]>(
  'FST_ERR_HONO_INVALID_BODY', 'The request body could not be parsed: %s', 400)

/** Two mounts at one prefix: registration fails, naming the prefix. */
export const FST_ERR_HONO_DUPLICATED_MOUNT = createError<'FST_ERR_HONO_DUPLICATED_MOUNT', 500, [prefix: string]>(
  'FST_ERR_HONO_DUPLICATED_MOUNT', 'fastify-hono: an app is already mounted at prefix "%s"', 500)

/** A prefix Fastify's router cannot register (a `*` in it, say): registration fails, naming it. */
export const FST_ERR_HONO_INVALID_PREFIX = createError<'FST_ERR_HONO_INVALID_PREFIX', 500, [prefix: string, problem: string, options?: { cause: unknown }]>(
  'FST_ERR_HONO_INVALID_PREFIX', 'fastify-hono: prefix "%s" cannot be mounted: %s', 500, TypeError)

/**
 * Errors the app gets from reading the request body that are the client's
 * fault, by kind. The app sees them as @hono/node-server would give them (a
 * SyntaxError from json(), a TypeError from formData(), the abort); when
 * one leaves the app for Fastify (an app without onError, or one that
 * rethrows), fastifyErrorOf answers it as a Fastify route would.
 */
export type ClientBodyError = 'invalid json' | 'empty json' | 'invalid form' | 'aborted'

const clientBodyErrors = new WeakMap<object, ClientBodyError>()

/** Notes that `err`, from reading the body, is the client's fault; returns it. */
export function markClientBodyError<T> (err: T, kind: ClientBodyError): T {
  if (typeof err === 'object' && err !== null && !clientBodyErrors.has(err)) clientBodyErrors.set(err, kind)
  return err
}

/**
 * The error Fastify's error handler gets for an error that left the app:
 * for a body the client got wrong, what a Fastify route's body parser gives
 * (400, logged at info); any other error as it is.
 * - invalid JSON: FST_ERR_CTP_INVALID_JSON_BODY; an empty body read as JSON:
 *   FST_ERR_CTP_EMPTY_JSON_BODY (Fastify's JSON parser tells them apart);
 * - a malformed multipart or urlencoded body: FST_ERR_HONO_INVALID_BODY
 *   (Fastify has no parser of its own for them);
 * - an upload the client aborted: the error itself with `statusCode` 400, as
 *   Fastify's body reader sets it.
 * The original error is the `cause` of the new ones.
 */
export function fastifyErrorOf (err: unknown): unknown {
  if (typeof err !== 'object' || err === null) return err
  const kind = clientBodyErrors.get(err)
  if (kind === undefined) return err
  switch (kind) {
    case 'invalid json': {
      // Fastify 5.0's JSON parser had no code of its own: it answered with the parse error, given statusCode 400.
      const InvalidJson = (errorCodes as Partial<typeof errorCodes>).FST_ERR_CTP_INVALID_JSON_BODY
      if (InvalidJson === undefined) return Object.assign(err, { statusCode: 400 })
      return Object.assign(new InvalidJson(), { cause: err })
    }
    case 'empty json': return Object.assign(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), { cause: err })
    case 'invalid form': return new FST_ERR_HONO_INVALID_BODY((err as Error).message, { cause: err })
    case 'aborted': {
      const status = (err as { statusCode?: unknown }).statusCode
      if (!(typeof status === 'number' && status >= 400)) (err as { statusCode?: number }).statusCode = 400
      return err
    }
  }
}
