// Errors the bridge raises itself. Each carries a statusCode, so Fastify's
// error handler answers with it and logs it like any route error.

export class FastifyHonoError extends Error {
  readonly code: string
  readonly statusCode: number

  constructor (code: string, statusCode: number, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'FastifyHonoError'
    this.code = code
    this.statusCode = statusCode
  }
}

/** The request cannot be turned into a valid `Request` (bad Host, bad target, bad header). */
export function badRequest (message: string, cause?: unknown): FastifyHonoError {
  return new FastifyHonoError('FST_HONO_BAD_REQUEST', 400, message, cause === undefined ? undefined : { cause })
}

/** The app's fetch resolved to something that is not a Response. */
export function invalidResponse (value: unknown): FastifyHonoError {
  const kind = value === null ? 'null' : typeof value
  return new FastifyHonoError('FST_HONO_INVALID_RESPONSE', 500, `app.fetch() must return a Response, got ${kind}`)
}

/** A registration option is invalid: thrown from the plugin, so `register` rejects with it. */
export function invalidOption (option: string, message: string): FastifyHonoError {
  return new FastifyHonoError('FST_HONO_INVALID_OPTION', 500, `fastify-hono: option "${option}" ${message}`)
}
