import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/**
 * Shifting a share of a route's traffic from its Fastify route to the Hono
 * twin, with Fastify's own router: the mount registers, in its own scope
 * (its hooks, its passthrough body parser), a route at the same method and
 * path constrained by the `fastifyHonoShare` strategy. For each request the
 * router derives the request itself, and the route's constraint store (one
 * per route node in find-my-way) asks the route's Split whether this
 * request goes to Hono: the constrained route, the more specific, then wins
 * over the Fastify route; otherwise the Fastify route answers, as before.
 * Nothing is derived on a server without a split route, and a route without
 * one never calls the store.
 */

const SHARE_CONSTRAINT = 'fastifyHonoShare'

/** Where a sticky split reads the request's key. */
export type StickyKey = { header: string } | { cookie: string } | { address: true }

/** One route's share: changed at runtime by setting `share`, read on the next request. */
export class Split {
  /** Percent of requests (0–100) that go to the Hono twin. */
  share: number
  readonly sticky: StickyKey | undefined
  /** Requests the router sent each way since registration. */
  hono = 0
  fastify = 0

  constructor (share: number, sticky: StickyKey | undefined) {
    this.share = share
    this.sticky = sticky
  }

  /** Whether this request goes to the Hono twin: random, or by the hash of its key (a request without one stays on Fastify). */
  toHono (request: IncomingMessage): boolean {
    const share = this.share
    let hono: boolean
    if (share <= 0) hono = false
    else if (share >= 100) hono = true
    else if (this.sticky === undefined) hono = Math.random() * 100 < share
    else {
      const key = stickyKey(request, this.sticky)
      hono = key !== undefined && bucket(key) < share * 100
    }
    if (hono) this.hono++
    else this.fastify++
    return hono
  }
}

/** Registers the constraint strategy on the server's router, once. */
export function useShareConstraint (fastify: FastifyInstance): void {
  if (fastify.hasConstraintStrategy(SHARE_CONSTRAINT)) return
  fastify.addConstraintStrategy({
    name: SHARE_CONSTRAINT,
    storage () {
      let split: Split | undefined
      let handlers = 0
      return {
        // The derived value is the request; the route's Split decides.
        get: (request: unknown) => split !== undefined && split.toHono(request as IncomingMessage) ? handlers : null,
        set: (value: unknown, indexes: unknown) => {
          split = value as Split
          handlers = indexes as number
        }
      } as never
    },
    validate (value: unknown) {
      if (!(value instanceof Split)) throw new TypeError('fastifyHonoShare takes a Split')
    },
    deriveConstraint: (request: unknown) => request as never,
    mustMatchWhenDerived: false
  })
}

/** The route options' constraint for a split route. */
export function shareConstraint (split: Split): Record<string, unknown> {
  return { [SHARE_CONSTRAINT]: split }
}

function stickyKey (request: IncomingMessage, sticky: StickyKey): string | undefined {
  if ('header' in sticky) {
    const value = request.headers[sticky.header]
    return Array.isArray(value) ? value[0] : value
  }
  if ('cookie' in sticky) return cookieValue(request.headers.cookie, sticky.cookie)
  return request.socket?.remoteAddress
}

/** One cookie's value from a Cookie header, as sent (no decoding: only hashed). */
function cookieValue (header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=')
    if (at !== -1 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim()
  }
  return undefined
}

/** A stable bucket from 0 to 9999 for a key (FNV-1a, 32 bits). */
export function bucket (key: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0) % 10000
}
