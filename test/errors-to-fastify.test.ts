import { test } from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { basicAuth } from 'hono/basic-auth'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

// An error thrown in a mounted app that has no error handler of its own goes
// to Fastify's error handler, onError hooks and log, as a Fastify route's
// error does. HTTPExceptions and an app's own onError keep Hono's answer.

async function serve (t: Tap.Test, app: Hono, options: { customHandler?: boolean } = {}): Promise<{ base: string, handled: string[], hooked: string[], logged: Array<{ level: number, msg: string, err?: { message: string } }> }> {
  const handled: string[] = []
  const hooked: string[] = []
  const logged: Array<{ level: number, msg: string, err?: { message: string } }> = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line !== '') logged.push(JSON.parse(line))
      callback()
    }
  })
  const server = Fastify({ logger: { level: 'info', stream } })
  server.addHook('onError', async (request, reply, error) => { hooked.push(error.message) })
  if (options.customHandler === true) {
    server.setErrorHandler((error, request, reply) => {
      handled.push(error.message)
      return reply.code(503).send({ fastifyHandled: error.message })
    })
  }
  await server.register(fastifyHono, { app, prefix: '/m' })
  t.teardown(() => server.close())
  const { base } = await listen(server)
  return { base, handled, hooked, logged }
}

function throwingApp (after: string[]): Hono {
  const app = new Hono()
  app.use('*', async (c, next) => {
    await next()
    after.push(c.req.path) // code after next(): does not run for an error that goes to Fastify
  })
  app.get('/sync', () => { throw new Error('sync boom') })
  app.get('/async', async () => { await Promise.resolve(); throw new Error('async boom') })
  app.get('/http-exception', () => { throw new HTTPException(418, { message: 'teapot' }) })
  app.get('/auth', basicAuth({ username: 'u', password: 'p' }), (c) => c.text('in'))
  app.get('/ok', (c) => c.text('ok'))
  const sub = new Hono()
  sub.get('/boom', () => { throw new Error('sub boom') })
  app.route('/sub', sub)
  const own = new Hono()
  own.onError((err, c) => c.text(`sub handled ${err.message}`, 422))
  own.get('/boom', () => { throw new Error('own boom') })
  app.route('/own', own)
  return app
}

test("an app without onError: its errors reach Fastify's error handler, onError hooks and log", async (t) => {
  const after: string[] = []
  const { base, handled, hooked } = await serve(t, throwingApp(after), { customHandler: true })
  for (const path of ['/sync', '/async', '/sub/boom']) {
    const res = await fetch(`${base}/m${path}`)
    t.equal(res.status, 503, `${path}: the Fastify error handler's status`)
    t.same(await res.json(), { fastifyHandled: `${path === '/sub/boom' ? 'sub' : path.slice(1)} boom` })
  }
  t.same(handled, ['sync boom', 'async boom', 'sub boom'])
  t.same(hooked, ['sync boom', 'async boom', 'sub boom'], 'onError hooks saw each error')
  t.same(after, [], 'code after await next() did not run for them')
})

test("the default Fastify error answer, and the error in pino's log", async (t) => {
  const app = new Hono()
  app.get('/boom', () => { throw new Error('default boom') })
  const { base, logged } = await serve(t, app)
  const originalError = console.error
  const printed: unknown[] = []
  console.error = (...args: unknown[]) => { printed.push(args) }
  t.teardown(() => { console.error = originalError })
  const res = await fetch(`${base}/m/boom`)
  t.equal(res.status, 500)
  t.same(await res.json(), { statusCode: 500, error: 'Internal Server Error', message: 'default boom' }, "Fastify's own error format")
  const line = logged.find((l) => l.err?.message === 'default boom')
  t.ok(line !== undefined && line.level === 50, 'logged by pino at error level')
  t.same(printed, [], 'not printed by Hono with console.error')
})

test("HTTPExceptions, sub-apps and apps with their own onError keep Hono's answer", async (t) => {
  const after: string[] = []
  const { base, handled, hooked } = await serve(t, throwingApp(after), { customHandler: true })
  let res = await fetch(`${base}/m/http-exception`)
  t.equal(res.status, 418)
  t.equal(await res.text(), 'teapot')
  res = await fetch(`${base}/m/auth`)
  t.equal(res.status, 401, "basicAuth's 401")
  t.match(res.headers.get('www-authenticate'), /^Basic realm=/, 'with its WWW-Authenticate')
  res = await fetch(`${base}/m/own/boom`)
  t.equal(res.status, 422)
  t.equal(await res.text(), 'sub handled own boom', "the sub-app's own onError")
  t.same(handled, [], "Fastify's error handler never ran")
  t.same(hooked, [])
  t.same(after.sort(), ['/auth', '/http-exception', '/own/boom'], 'middleware after next() ran for these, as in Hono')
})

test("an onError set on the app, before or after registration, is the app's", async (t) => {
  const app = new Hono()
  app.get('/boom', () => { throw new Error('boom') })
  const { base, handled } = await serve(t, app, { customHandler: true })
  let res = await fetch(`${base}/m/boom`)
  t.equal(res.status, 503, 'no onError yet: Fastify')
  app.onError((err, c) => c.text(`hono handled ${err.message}`, 500))
  res = await fetch(`${base}/m/boom`)
  t.equal(res.status, 500)
  t.equal(await res.text(), 'hono handled boom', 'set after registration: used')
  t.same(handled, ['boom'])
})

test('the app itself is not modified: used elsewhere, it answers as Hono does', async (t) => {
  const app = new Hono()
  app.get('/boom', () => { throw new Error('boom') })
  const defaultHandler = app.errorHandler
  await serve(t, app)
  t.equal(app.errorHandler, defaultHandler, 'the same error handler')
  const originalError = console.error
  console.error = () => {}
  t.teardown(() => { console.error = originalError })
  const res = await app.request('/boom')
  t.equal(res.status, 500)
  t.equal(await res.text(), 'Internal Server Error', "Hono's own answer")
})
