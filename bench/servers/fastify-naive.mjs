// Variant 5: the naive bridge. Build a fetch Request, call app.fetch and hand
// the Response to Fastify 5's own reply.send(Response) support.
import Fastify from 'fastify'
import { createRootApp } from '../app.mjs'
import { PREFIX } from '../payloads.mjs'

export async function createServer () {
  const app = createRootApp()
  const fastify = Fastify({ logger: false })
  await fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => done(null, body))
    scope.route({
      // Only GET and POST: Fastify's automatic HEAD route answers 500 for a Response.
      method: ['GET', 'POST'],
      url: `${PREFIX}/*`,
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const url = `http://${request.headers.host ?? 'localhost'}${request.url}`
        const headers = new Headers()
        const raw = request.raw.rawHeaders
        for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1])
        const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
        const response = await app.fetch(new Request(url, {
          method: request.method, headers, body: hasBody ? request.body : undefined, duplex: 'half'
        }))
        return reply.send(response)
      }
    })
  })
  await fastify.ready()
  return fastify.server
}
