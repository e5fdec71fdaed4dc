// Reference variant, production stack: the Fastify route plus the Hono app,
// with nothing to bridge them. The Fastify routes of fastify-stack, each of
// which first calls the Hono app with the least a Request can be (its
// method, its URL, an empty Headers shared by all) and waits for its
// Response (fastify-hono's lightweight classes installed, as the plugin
// installs them), then answers as the Fastify route does, the same bytes.
// It pays the Fastify route's whole cost (its routing, the stack's hooks,
// its handler and reply.send) plus Hono's (the router, Context, the
// middleware and handler, the Response): what running this app costs a
// Fastify route, whoever runs it. A mount pays Hono's part too, and, in
// place of the route's handler and reply.send, its own bridge and way out:
// fastify-hono ÷ this is the plugin's share of a stack ratio, this ÷
// fastify-stack Hono's. (Not `new Request()`: the public constructor makes a
// native Request, several microseconds.) No POST echo: Hono would parse a
// body Fastify has already parsed.
import { createRequire } from 'node:module'
import Fastify from 'fastify'
import { createApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'
import { registerStack } from '../stack.mjs'
import { routes } from './fastify-plain.mjs'

// dist/ is CommonJS; the globals module has no side effects until called.
createRequire(import.meta.url)('../../dist/web/globals.js').installLightweightGlobals()

const NO_HEADERS = new Headers()

/** What Hono reads of a Request on these routes. */
class FloorRequest {
  constructor (method, url) {
    this.method = method
    this.url = url
  }

  get headers () { return NO_HEADERS }
}

export async function createServer () {
  const app = createApp()
  const fastify = Fastify({ logger: false })
  await registerStack(fastify)
  // Every route declared after this runs the Hono app before its own handler.
  fastify.addHook('onRoute', (options) => {
    const handler = options.handler
    options.handler = function honoFirst (request, reply) {
      // The app's routes sit at its root, as a mount under PREFIX sees them.
      const response = app.fetch(new FloorRequest(request.method, 'http://localhost' + request.url.slice(PREFIX.length)))
      if (typeof response.then !== 'function') return handler.call(this, request, reply)
      return response.then(() => handler.call(this, request, reply))
    }
  })
  await fastify.register(routes, { prefix: PREFIX })
  await fastify.ready()
  return fastify.server
}
