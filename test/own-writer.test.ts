import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { setCookie } from 'hono/cookie'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest } from './helpers/net'

// What onSend hooks the plugin ran hand back is written by the plugin's own
// writer. When Node rejects that head (here a header value a hook set), the
// writer puts back the reply's headers from before the app's response, so
// the error answer Fastify's error handler writes carries none of the app's
// headers (its cookie, caching, own fields), and Node's state is clean for it.

test('after onSend hooks, a head Node rejects: the error answer carries none of the app\'s headers', async (t) => {
  const app = new Hono()
  app.get('/boom', (c) => {
    setCookie(c, 'session', 'secret')
    return c.text('boom', 200, { 'cache-control': 'public, max-age=600', 'x-app': 'yes' })
  })
  const fastify = Fastify()
  await fastify.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => { reply.header('x-before', 'kept') })
    scope.addHook('onSend', async (request, reply, payload) => {
      // On the app's response only: the error answer runs the hooks again.
      if (payload === 'boom') reply.header('x-bad', 'a\u0001b')
      return payload
    })
    scope.setErrorHandler(async (error, request, reply) => {
      reply.removeHeader('x-bad')
      return await reply.code(500).send({ failed: (error as Error & { code?: string }).code })
    })
    await scope.register(fastifyHono, { app, prefix: '/m' })
  })
  t.teardown(() => fastify.close())
  const { port } = await listen(fastify)

  const response = await rawRequest(port, 'GET', '/m/boom')
  t.equal(response.status, 500)
  t.same(JSON.parse(response.body), { failed: 'ERR_INVALID_CHAR' }, 'Node\'s own error reached the error handler')
  for (const name of ['set-cookie', 'cache-control', 'x-app']) {
    t.equal(response.headers[name], undefined, `no ${name}`)
  }
  t.same(response.headers['x-before'], ['kept'], 'what a Fastify hook set before the app\'s response stays')
  t.same(response.headers['content-type'], ['application/json; charset=utf-8'])
})

test('after onSend hooks, the app\'s live stream handed back untouched and a head Node rejects: the error answer carries none of the app\'s headers', async (t) => {
  const app = new Hono()
  let cancelled = false
  app.get('/stream', (c) => {
    setCookie(c, 'session', 'secret')
    const body = new ReadableStream<Uint8Array>({
      pull (controller) { controller.enqueue(new TextEncoder().encode('tick\n')) },
      cancel () { cancelled = true }
    })
    return c.body(body, 200, { 'cache-control': 'public, max-age=600', 'x-app': 'yes', 'content-type': 'text/plain' })
  })
  const fastify = Fastify()
  await fastify.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => { reply.header('x-before', 'kept') })
    scope.addHook('onSend', async (request, reply, payload) => {
      // On the app's stream only: the error answer runs the hooks again.
      if (typeof (payload as ReadableStream | null)?.getReader === 'function') reply.header('x-bad', 'a\u0001b')
      return payload
    })
    scope.setErrorHandler(async (error, request, reply) => {
      reply.removeHeader('x-bad')
      return await reply.code(500).send({ failed: (error as Error & { code?: string }).code })
    })
    await scope.register(fastifyHono, { app, prefix: '/m' })
  })
  t.teardown(() => fastify.close())
  const { port } = await listen(fastify)

  const response = await rawRequest(port, 'GET', '/m/stream')
  t.equal(response.status, 500)
  t.same(JSON.parse(response.body), { failed: 'ERR_INVALID_CHAR' }, 'Node\'s own error reached the error handler')
  for (const name of ['set-cookie', 'cache-control', 'x-app']) {
    t.equal(response.headers[name], undefined, `no ${name}`)
  }
  t.same(response.headers['x-before'], ['kept'], 'what a Fastify hook set before the app\'s response stays')
  t.same(response.headers['content-type'], ['application/json; charset=utf-8'])
  t.ok(cancelled, 'the app\'s stream is cancelled')
})
