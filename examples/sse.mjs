// Server-sent events from a mounted Hono route (hono/streaming's streamSSE).
// The response goes out chunked, one event at a time, as the handler writes
// it; when the client goes away, Fastify cancels the body and the stream's
// onAbort callback runs, so the loop stops.
//
//   node examples/sse.mjs
//   curl -N 'http://127.0.0.1:3000/events/clock?count=5&interval=1000'
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import fastifyHono from 'fastify-hono'

function boundedInteger (value, fallback, min, max) {
  const n = Number.parseInt(value ?? '', 10)
  return Number.isNaN(n) ? fallback : Math.min(Math.max(n, min), max)
}

export function createEventsApp () {
  const app = new Hono()
  app.get('/clock', (c) => {
    const count = boundedInteger(c.req.query('count'), 10, 1, 1000)
    const interval = boundedInteger(c.req.query('interval'), 1000, 10, 60_000)
    const { log } = c.env.request
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => {
        log.info('sse client went away')
      })
      for (let i = 0; i < count && !stream.aborted; i++) {
        await stream.writeSSE({ event: 'tick', id: String(i), data: JSON.stringify({ i, at: Date.now() }) })
        if (i < count - 1) await stream.sleep(interval)
      }
      if (!stream.aborted) await stream.writeSSE({ event: 'done', data: 'bye' })
    })
  })
  return app
}

export async function build (options = {}) {
  const server = Fastify({ logger: options.logger ?? false })
  await server.register(fastifyHono, { app: createEventsApp(), prefix: '/events' })
  return server
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await build({ logger: true })
  await server.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  const base = `http://${process.env.HOST ?? '127.0.0.1'}:${server.server.address().port}`
  console.log(`sse example listening on ${base}
  curl -N '${base}/events/clock?count=5&interval=1000'`)
}
