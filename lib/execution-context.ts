import type { FastifyBaseLogger } from 'fastify'
import type { FastifyHonoExecutionContext } from './bindings.js'
import { keepUntilSettled, type ServerShutdown } from './shutdown.js'

/**
 * `c.executionCtx` under the mount, as Workers, Bun, Deno and Vercel apps
 * use it (@hono/node-server gives none, and `c.executionCtx` throws there):
 * - `waitUntil(promise)`: the promise is kept until it settles, and
 *   `fastify.close()` waits for it within the close bound (shutdown.ts); a
 *   rejection is logged at error with the request's id, never an unhandled
 *   rejection.
 * - `passThroughOnException()`: on Workers, an exception then sends the
 *   request on to the origin. Behind the mount there is no origin to send it
 *   to: errors the app does not handle itself already reach Fastify's error
 *   handler. It does nothing.
 * - `props`: an empty object (Workers' service-binding props; none here).
 * One small object per request, made before the app runs: nothing else is
 * done for a request that never reads it.
 */
export class MountExecutionContext implements FastifyHonoExecutionContext {
  readonly #shutdown: ServerShutdown
  readonly #log: FastifyBaseLogger
  #props: Record<string, unknown> | undefined

  constructor (shutdown: ServerShutdown, log: FastifyBaseLogger) {
    this.#shutdown = shutdown
    this.#log = log
  }

  waitUntil (promise: Promise<unknown>): void {
    keepUntilSettled(this.#shutdown, promise, this.#log)
  }

  passThroughOnException (): void {}

  get props (): Record<string, unknown> {
    this.#props ??= {}
    return this.#props
  }
}
