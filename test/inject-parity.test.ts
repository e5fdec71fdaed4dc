// fastify.inject() (light-my-request) must show what the socket shows: the
// same status line and every header but Date, Connection and Keep-Alive,
// whichever way the response goes out (fast writer, stream writer, after
// onSend hooks, reply.send).
import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest } from './helpers/net'

function app (): Hono {
  const hono = new Hono()
  hono.get('/text', (c) => c.text('hello'))
  hono.get('/json', (c) => c.json({ a: 1 }))
  hono.get('/bytes', (c) => c.body(new Uint8Array([1, 2, 3])))
  hono.get('/cookies', (c) => {
    c.header('set-cookie', 'a=1; Path=/', { append: true })
    c.header('set-cookie', 'b=2; Path=/', { append: true })
    return c.text('two cookies')
  })
  hono.get('/native', () => new Response('native body', { headers: { 'x-native': 'yes' } }))
  // A handler's record with names in mixed case, merged under lowercase names.
  hono.get('/record', () => new Response('record body', { headers: { 'X-Mixed-Case': 'm', 'Content-Type': 'text/plain; charset=utf-8' } }))
  hono.get('/stream', () => new Response(new ReadableStream({
    async pull (controller) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      controller.enqueue(new TextEncoder().encode('late'))
      controller.close()
    }
  }), { headers: { 'content-type': 'text/plain' } }))
  hono.get('/length', () => new Response('abc', { headers: { 'content-length': '3' } }))
  hono.get('/reason', () => new Response('abc', { status: 200, statusText: 'Fine' }))
  hono.get('/empty', (c) => c.body(null, 204))
  return hono
}

async function server (): Promise<ReturnType<typeof Fastify>> {
  const fastify = Fastify()
  await fastify.register(fastifyHono, { app: app(), prefix: '/m' })
  await fastify.register(async (scope) => {
    scope.addHook('onSend', async (request, reply, payload) => payload)
    await scope.register(fastifyHono, { app: app(), prefix: '/m' })
  }, { prefix: '/hooked' })
  await fastify.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => { reply.header('x-from-fastify', 'f') })
    await scope.register(fastifyHono, { app: app(), prefix: '/m' })
  }, { prefix: '/fastify-headers' })
  return fastify
}

const IGNORED = new Set(['date', 'connection', 'keep-alive'])

function normalized (headers: Record<string, string | string[] | number | undefined>): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (IGNORED.has(lower) || value === undefined) continue
    out[lower] = (Array.isArray(value) ? value : [String(value)]).map(String)
  }
  return out
}

const paths = ['/text', '/json', '/bytes', '/cookies', '/native', '/record', '/stream', '/length', '/reason', '/empty']

test('inject() shows the status line and headers the socket shows, on every way out', async (t) => {
  const fastify = await server()
  t.teardown(() => fastify.close())
  const { port } = await listen(fastify)
  for (const scope of ['', '/hooked', '/fastify-headers']) {
    for (const path of paths) {
      for (const method of ['GET', 'HEAD']) {
        const url = `${scope}/m${path}`
        const wire = await rawRequest(port, method, url)
        const injected = await fastify.inject({ method: method as 'GET' | 'HEAD', url })
        const label = `${method} ${url}`
        t.equal(injected.statusCode, wire.status, `${label}: status`)
        t.equal(injected.statusMessage, wire.reason, `${label}: reason phrase`)
        t.same(normalized(injected.headers), normalized(wire.headers), `${label}: headers`)
        if (method === 'GET') t.equal(injected.body, wire.body, `${label}: body`)
        if (path === '/record') t.same(wire.headers['x-mixed-case'], ['m'], `${label}: the record's mixed-case name on the wire`)
      }
    }
  }
})
