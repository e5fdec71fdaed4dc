import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * Which Hono routes read Fastify's bindings (`c.env.request`, `c.env.reply`,
 * `c.env.fastify`) and so cannot yet leave Fastify: the last step of a
 * migration. On a mount with the `migration` option, `c.env` is a
 * TrackedBindings, whose getters note each read under the Hono route the
 * request reached (`request.honoRoute`, set by the time middleware and
 * handlers run). Other mounts keep the plain object. (The three are
 * getters on the prototype: `{ ...c.env }` copies `incoming` and
 * `outgoing` alone.)
 */
export type BindingName = 'request' | 'reply' | 'fastify'

/** Per Hono route (`/v2/users/:id`), the bindings it was seen to read. */
export type BindingsUse = Map<string, Set<BindingName>>

export class TrackedBindings {
  incoming: IncomingMessage | Http2ServerRequest
  outgoing: ServerResponse | Http2ServerResponse | undefined
  readonly #request: FastifyRequest
  readonly #reply: FastifyReply
  readonly #fastify: FastifyInstance
  readonly #use: BindingsUse

  constructor (request: FastifyRequest, reply: FastifyReply, fastify: FastifyInstance, outgoing: ServerResponse | Http2ServerResponse | undefined, use: BindingsUse) {
    this.incoming = request.raw
    this.outgoing = outgoing
    this.#request = request
    this.#reply = reply
    this.#fastify = fastify
    this.#use = use
  }

  get request (): FastifyRequest { this.#note('request'); return this.#request }
  get reply (): FastifyReply { this.#note('reply'); return this.#reply }
  get fastify (): FastifyInstance { this.#note('fastify'); return this.#fastify }

  #note (name: BindingName): void {
    const route = this.#request.honoRoute
    if (route === undefined) return
    let names = this.#use.get(route)
    if (names === undefined) this.#use.set(route, names = new Set())
    names.add(name)
  }
}
