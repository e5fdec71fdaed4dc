// A mount deployed to be restarted without losing a response: close-with-grace
// calls fastify.close() on SIGTERM; the mount's closeTimeout bounds how long
// streams and waitUntil() work may go on; event streams resume from their
// Last-Event-ID on whichever instance the client reconnects to. See
// docs/deployment.md.
//
//   node examples/deployment.mjs
//   curl -N http://127.0.0.1:3000/v2/events -H 'Last-Event-ID: 3'
//   curl -X POST http://127.0.0.1:3000/v2/orders -H 'content-type: application/json' -d '{"item":"tea"}'
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import closeWithGrace from 'close-with-grace'
import fastifyHono from 'fastify-hono'

/**
 * The event log every instance reads: here event n is known to all of them
 * (a deployed app reads a database or a stream). `after(id)` gives the events
 * after `id` that exist by now, one every `interval` ms since `since`.
 */
export function createLog ({ since = Date.now(), interval = 100 } = {}) {
  return {
    async after (id) {
      const newest = Math.floor((Date.now() - since) / interval)
      const events = []
      for (let n = id + 1; n <= newest && events.length < 50; n++) events.push({ id: n, data: `tick ${n}` })
      return events
    }
  }
}

export function createApp ({ log = createLog(), audit = [] } = {}) {
  const app = new Hono()
  app.get('/health', (c) => c.text('ok'))
  app.get('/events', (c) => streamSSE(c, async (stream) => {
    let last = Number(c.req.header('last-event-id') ?? -1)
    while (!stream.aborted) {
      for (const event of await log.after(last)) {
        await stream.writeSSE({ id: String(event.id), data: event.data, retry: 1000 })
        last = event.id
      }
      await stream.sleep(100)
    }
  }))
  app.post('/orders', async (c) => {
    const order = { id: audit.length + 1, ...(await c.req.json()) }
    c.executionCtx.waitUntil(writeAudit(audit, { order: order.id, requestId: c.env.request.id }))
    return c.json(order, 201)
  })
  return app
}

/** An audit write that takes a while: the response does not wait for it; fastify.close() does. */
async function writeAudit (audit, entry) {
  await new Promise((resolve) => setTimeout(resolve, 100))
  audit.push(entry)
}

export async function build (options = {}) {
  const fastify = Fastify({ logger: options.logger ?? false })
  await fastify.register(fastifyHono, { app: createApp(options), prefix: '/v2', closeTimeout: 5000 })
  return fastify
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fastify = await build({ logger: true })
  closeWithGrace({ delay: 10_000 }, async ({ err }) => {
    if (err) fastify.log.error({ err }, 'closing on error')
    await fastify.close()
  })
  await fastify.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${fastify.server.address().port}`
  console.log(`deployment example listening on ${base}
  curl -N ${base}/v2/events -H 'Last-Event-ID: 3'`)
}
