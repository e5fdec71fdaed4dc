import type { FetchApp } from './bindings.js'
import { FST_ERR_HONO_INVALID_OPTION } from './errors.js'
import { isHonoApp } from './app-view.js'

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
}

export interface ResolvedOptions {
  app: FetchApp
  stripPrefix: boolean
  notFound: 'hono' | 'fastify'
  bodyLimit: number | undefined
  overrideGlobalObjects: boolean
}

/** Checks the options once, at registration, and names the option that is wrong. */
export function resolveOptions (options: Partial<FastifyHonoOptions> | undefined): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new FST_ERR_HONO_INVALID_OPTION('app', 'is required: register(fastifyHono, { app })')
  }
  const { app, stripPrefix = true, notFound = 'hono', bodyLimit, overrideGlobalObjects = true } = options
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
  return { app, stripPrefix, notFound, bodyLimit, overrideGlobalObjects }
}
