// Variant 4: the do-it-yourself bridge. Fastify routes hand the raw request
// and response to @hono/node-server's listener after reply.hijack().
import { getRequestListener } from '@hono/node-server'
import Fastify from 'fastify'
import { createRootApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const listener = getRequestListener(createRootApp().fetch)
  const fastify = Fastify({ logger: false })
  await fastify.register(async (scope) => {
    // Leave the body stream unread: the listener reads it from request.raw.
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', (request, payload, done) => done(null))
    scope.route({
      method: ['GET', 'POST'],
      url: `${PREFIX}/*`,
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        reply.hijack()
        await listener(request.raw, reply.raw)
      }
    })
  })
  await fastify.ready()
  return fastify.server
}
