import type { FetchApp } from './bindings.js'

// Set on the per-request env object by the not-found handler installed below.
const kUnmatched = Symbol('fastify-hono.unmatched')

interface HonoNotFound {
  notFound (handler: (c: { env: object, text: (body: string, status: 404) => Response }) => Response): unknown
}

/**
 * For `notFound: 'fastify'`: Hono calls its not-found handler when no route
 * produced a response. This replaces it with one that marks the request, so
 * the route can hand it to Fastify's not-found handler instead.
 */
export function markUnmatchedRequests (app: FetchApp): void {
  (app as unknown as HonoNotFound).notFound((c) => {
    (c.env as Record<symbol, boolean>)[kUnmatched] = true
    return c.text('404 Not Found', 404)
  })
}

export function wasUnmatched (env: object): boolean {
  return (env as Record<symbol, boolean>)[kUnmatched] === true
}
