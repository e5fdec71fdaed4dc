// `request.honoRoute` for an ES module consumer.
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'

const server = Fastify()
server.register(fastifyHono, { app: { fetch: () => new Response('ok') } })
server.addHook('onSend', async (request, _reply, payload) => {
  const route: string | undefined = request.honoRoute
  // @ts-expect-error: undefined where no Hono route answered
  const sure: string = request.honoRoute
  return route === sure ? payload : payload
})
