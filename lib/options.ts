import type { FetchApp } from './bindings.js'
import { FST_ERR_HONO_INVALID_OPTION } from './errors.js'
import { isHonoApp } from './app-view.js'
import { checkOpenAPIOption, type OpenAPIOption } from './openapi.js'

export interface FastifyHonoOptions {
  /** A Hono app, or any object with `fetch(request, env, executionCtx)`. */
  app: FetchApp
  /** The app sees paths relative to the mount point (default), or the full path (`false`, for `basePath` apps). */
  stripPrefix?: boolean
  /** Who answers a request that no Hono route matched: the Hono app (default) or Fastify's not-found handler. */
  notFound?: 'hono' | 'fastify'
  /** Largest request body in bytes; larger bodies answer 413. Defaults to the route's or instance's bodyLimit. */
  bodyLimit?: number
  /** Install the lightweight Request, Response and Headers as globals (default true). */
  overrideGlobalObjects?: boolean
  /**
   * The app's OpenAPI 3 document, whose paths @fastify/swagger's document
   * includes under the mount's prefix: the document, a function that returns
   * it, or `true` for an app with `getOpenAPIDocument()` (@hono/zod-openapi).
   * The mount's own catch-all routes are never in that document.
   */
  openapi?: OpenAPIOption
}

export interface ResolvedOptions {
  app: FetchApp
  stripPrefix: boolean
  notFound: 'hono' | 'fastify'
  bodyLimit: number | undefined
  overrideGlobalObjects: boolean
  openapi: OpenAPIOption | undefined
}

/** Checks the options once, at registration, and names the option that is wrong. */
export function resolveOptions (options: Partial<FastifyHonoOptions> | undefined): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new FST_ERR_HONO_INVALID_OPTION('app', 'is required: register(fastifyHono, { app })')
  }
  const { app, stripPrefix = true, notFound = 'hono', bodyLimit, overrideGlobalObjects = true, openapi } = options
  if (app === undefined || app === null) {
    throw new FST_ERR_HONO_INVALID_OPTION('app', 'is required: pass a Hono app or an object with a fetch(request) method')
  }
  if (typeof (app as Partial<FetchApp>).fetch !== 'function') {
    throw new FST_ERR_HONO_INVALID_OPTION('app', 'must be a Hono app or an object with a fetch(request) method')
  }
  if (typeof stripPrefix !== 'boolean') {
    throw new FST_ERR_HONO_INVALID_OPTION('stripPrefix', `must be a boolean, got ${JSON.stringify(stripPrefix)}`)
  }
  if (notFound !== 'hono' && notFound !== 'fastify') {
    throw new FST_ERR_HONO_INVALID_OPTION('notFound', `must be 'hono' or 'fastify', got ${JSON.stringify(notFound)}`)
  }
  if (notFound === 'fastify' && !isHonoApp(app)) {
    throw new FST_ERR_HONO_INVALID_OPTION('notFound', "'fastify' needs a Hono app, to tell unmatched requests apart")
  }
  if (bodyLimit !== undefined && !(Number.isInteger(bodyLimit) && bodyLimit > 0)) {
    throw new FST_ERR_HONO_INVALID_OPTION('bodyLimit', `must be a positive integer, got ${JSON.stringify(bodyLimit)}`)
  }
  if (typeof overrideGlobalObjects !== 'boolean') {
    throw new FST_ERR_HONO_INVALID_OPTION('overrideGlobalObjects', `must be a boolean, got ${JSON.stringify(overrideGlobalObjects)}`)
  }
  checkOpenAPIOption(openapi, app)
  return { app, stripPrefix, notFound, bodyLimit, overrideGlobalObjects, openapi }
}
