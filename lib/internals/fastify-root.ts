import type { FastifyInstance } from 'fastify'

/**
 * The root Fastify instance of an encapsulated one. Fastify makes each
 * plugin scope with `Object.create(parent)` (lib/plugin-override.js), so the
 * root is the last object on the prototype chain before Object.prototype
 * (read in the sources of fastify 5.0.0, 5.12.8 and 6.0.0-alpha.4; run on
 * 5.12.8 by test/route-list.test.ts). What is decorated
 * there is visible from every scope, as a decoration made at the top level
 * is. Falls back to the scope itself when the chain ends elsewhere (another
 * layout): then only that scope sees the decoration.
 */
export function rootInstance (fastify: FastifyInstance): FastifyInstance {
  let instance: object = fastify
  for (let proto = Object.getPrototypeOf(instance); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    instance = proto
  }
  const root = instance as Partial<FastifyInstance>
  return typeof root.decorate === 'function' && typeof root.hasDecorator === 'function' && root.server === fastify.server ? root as FastifyInstance : fastify
}
