// The example behind `npm start`: a Fastify server with a legacy Fastify
// route and a Hono app mounted at /v2.
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'

const api = new Hono()
api.get('/', (c) => c.text('Hello from Hono, mounted in Fastify'))
api.get('/users/:id', (c) => c.json({ id: c.req.param('id'), requestId: c.env.request.id }))
api.post('/echo', async (c) => c.json({ received: await c.req.json() }))

const server = Fastify({ logger: true })
server.get('/legacy', async () => 'still Fastify')
await server.register(fastifyHono, { app: api, prefix: '/v2' })

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
await server.listen({ port, host })
const base = `http://${host}:${server.server.address().port}`
console.log(`
fastify-hono example listening on ${base}
Try:
  curl ${base}/legacy
  curl ${base}/v2
  curl ${base}/v2/users/42
  curl -X POST -H 'content-type: application/json' -d '{"hello":"world"}' ${base}/v2/echo
Stop with Ctrl+C.
`)
