import { test, type Test } from 'tap'
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

/**
 * The app under a Fastify scope whose onRequest hook sets a header, whose
 * onSend hook adds a value Node rejects to the app's own payload (`isApp`;
 * the error answer runs the hooks again), and whose error handler answers
 * with Node's error code.
 */
async function serve (t: Test, app: Hono, isApp: (payload: unknown) => boolean): Promise<number> {
  const fastify = Fastify()
  await fastify.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => { reply.header('x-before', 'kept') })
    scope.addHook('onSend', async (request, reply, payload) => {
      if (isApp(payload)) reply.header('x-bad', 'a\u0001b')
      return payload
    })
    scope.setErrorHandler(async (error, request, reply) => {
      reply.removeHeader('x-bad')
      return await reply.code(500).send({ failed: (error as Error & { code?: string }).code })
    })
    await scope.register(fastifyHono, { app, prefix: '/m' })
  })
  t.teardown(() => fastify.close())
  return (await listen(fastify)).port
}

/** The error answer: Node's error reached the handler, and none of the app's headers came with it. */
function assertCleanError (t: Test, response: Awaited<ReturnType<typeof rawRequest>>): void {
  t.equal(response.status, 500)
  t.same(JSON.parse(response.body), { failed: 'ERR_INVALID_CHAR' }, 'Node\'s own error reached the error handler')
  for (const name of ['set-cookie', 'cache-control', 'x-app']) {
    t.equal(response.headers[name], undefined, `no ${name}`)
  }
  t.same(response.headers['x-before'], ['kept'], 'what a Fastify hook set before the app\'s response stays')
  t.same(response.headers['content-type'], ['application/json; charset=utf-8'])
}

test('after onSend hooks, a head Node rejects: the error answer carries none of the app\'s headers', async (t) => {
  const app = new Hono()
  app.get('/boom', (c) => {
    setCookie(c, 'session', 'secret')
    return c.text('boom', 200, { 'cache-control': 'public, max-age=600', 'x-app': 'yes' })
  })
  const port = await serve(t, app, (payload) => payload === 'boom')
  assertCleanError(t, await rawRequest(port, 'GET', '/m/boom'))
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
  const port = await serve(t, app, (payload) => typeof (payload as ReadableStream | null)?.getReader === 'function')
  assertCleanError(t, await rawRequest(port, 'GET', '/m/stream'))
  t.ok(cancelled, 'the app\'s stream is cancelled')
})
