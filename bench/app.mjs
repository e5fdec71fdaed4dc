// The Hono app every Hono-based variant serves.
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { streamSSE } from 'hono/streaming'
import {
  BIG_BODY, EIGHT_HEADERS, JSON_OBJECT, MIDDLEWARE_HEADER, PREFIX, RESOURCES, SSE_EVENTS, TEXT
} from './payloads.mjs'

/**
 * The app with its routes at the root, as mounted under PREFIX by
 * fastify-hono. `resources`: the resources with parameter routes (two each),
 * all sixteen unless given (hono-alone.mjs --resources).
 */
export function createApp (resources = RESOURCES) {
  const app = new Hono()
  app.get('/text', (c) => c.text(TEXT))
  app.get('/json', (c) => c.json(JSON_OBJECT))
  app.get('/headers', (c) => {
    for (const name in EIGHT_HEADERS) c.header(name, EIGHT_HEADERS[name])
    return c.text(TEXT)
  })
  app.get('/big', (c) => c.body(BIG_BODY, 200, { 'content-type': 'application/octet-stream' }))
  app.post('/echo', async (c) => c.json(await c.req.json()))
  app.get('/sse', (c) => streamSSE(c, async (stream) => {
    for (let i = 0; i < SSE_EVENTS; i++) await stream.writeSSE({ data: `event ${i}`, id: String(i) })
  }))

  // cors() touches c.res before next(), and the header after next() makes
  // Hono copy the finished response: the realistic middleware cost.
  app.use('/api/*', cors(), async (c, next) => {
    await next()
    c.header(MIDDLEWARE_HEADER[0], MIDDLEWARE_HEADER[1])
  })
  for (const resource of resources) {
    app.get(`/api/${resource}/:id`, (c) => c.json({ resource, id: c.req.param('id') }))
    app.get(`/bare/${resource}/:id`, (c) => c.json({ resource, id: c.req.param('id') }))
  }
  return app
}

/** The same app with PREFIX in its paths, for variants that pass the full URL. */
export function createRootApp () {
  return new Hono().route(PREFIX, createApp())
}
