// c.executionCtx under the mount: waitUntil() keeps work going after the
// response, fastify.close() waits for it within closeTimeout and warns of
// what it gave up on, a rejection is logged with the request id and is
// never an unhandled rejection; passThroughOnException() and props exist.
// Real sockets (fetch).
import { test } from 'tap'
import type { Writable } from 'node:stream'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'
import { logCollector } from './helpers/compat'

function logLines (level = 'info'): { lines: Array<Record<string, unknown>>, logger: { level: string, stream: Writable } } {
  const { stream, lines } = logCollector()
  return { lines, logger: { level, stream } }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

test('waitUntil(): the work runs after the response, and fastify.close() waits for it', async (t) => {
  const done: string[] = []
  const app = new Hono()
  app.get('/audit/:id', (c) => {
    const id = c.req.param('id')
    c.executionCtx.waitUntil(sleep(300).then(() => { done.push(id) }))
    return c.text(`accepted ${id}`)
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)
  const started = Date.now()
  const responses = await Promise.all(['a', 'b'].map(async (id) => (await fetch(`${base}/v2/audit/${id}`)).text()))
  t.same(responses, ['accepted a', 'accepted b'])
  t.ok(Date.now() - started < 300, 'answered before the work finished')
  t.same(done, [], 'the work is still running')
  await server.close()
  t.same(done.sort(), ['a', 'b'], 'close() resolved after the work was done')
})

test('close() gives up on waitUntil() work still pending at closeTimeout, and says how much at warn', async (t) => {
  const { lines, logger } = logLines('warn')
  const app = new Hono()
  app.get('/forever', (c) => {
    c.executionCtx.waitUntil(new Promise(() => {}))
    c.executionCtx.waitUntil(new Promise(() => {}))
    c.executionCtx.waitUntil(sleep(50))
    return c.text('ok')
  })
  const server = Fastify({ logger })
  await server.register(fastifyHono, { app, prefix: '/v2', closeTimeout: 300 })
  const { base } = await listen(server)
  t.equal(await (await fetch(`${base}/v2/forever`)).text(), 'ok')
  const started = Date.now()
  await server.close()
  const took = Date.now() - started
  t.ok(took >= 250 && took < 2000, `close() resolved at the bound (${took} ms)`)
  const warnings = lines.filter((line) => /waitUntil\(\) promise\(s\) still pending/.test(String(line.msg)))
  t.equal(warnings.length, 1, 'one warning')
  t.equal(warnings[0]?.level, 40)
  t.equal(warnings[0]?.pending, 2, 'the two promises that never settle')
})

test('a waitUntil() promise that rejects is logged at error with the request id, and is no unhandled rejection', async (t) => {
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => { process.off('unhandledRejection', onUnhandled) })
  const { lines, logger } = logLines()
  const app = new Hono()
  app.get('/fails', (c) => {
    c.executionCtx.waitUntil(sleep(20).then(() => { throw new Error('cache write failed') }))
    return c.text('ok')
  })
  const server = Fastify({ logger })
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)
  const response = await fetch(`${base}/v2/fails`)
  t.equal(response.status, 200, 'the response is not affected')
  t.equal(await response.text(), 'ok')
  await sleep(100)
  await server.close()
  const errors = lines.filter((line) => line.level === 50)
  t.equal(errors.length, 1, 'one error line')
  t.match(errors[0], { msg: 'a promise passed to c.executionCtx.waitUntil() rejected', err: { message: 'cache write failed' } })
  const request = lines.find((line) => line.msg === 'incoming request')
  t.ok(request?.reqId !== undefined && errors[0]?.reqId === request?.reqId, `the request's id (${String(errors[0]?.reqId)})`)
  t.same(unhandled, [], 'no unhandled rejection')
})

test('waitUntil() takes anything (a value, a thenable) as Workers does; passThroughOnException() and props exist', async (t) => {
  const app = new Hono()
  let settled = false
  app.get('/shape', (c) => {
    const ctx = c.executionCtx
    ctx.waitUntil(42 as unknown as Promise<unknown>)
    ctx.waitUntil({ then (resolve: () => void) { setTimeout(() => { settled = true; resolve() }, 50) } } as unknown as Promise<unknown>)
    ctx.passThroughOnException()
    return c.json({
      waitUntil: typeof ctx.waitUntil,
      passThroughOnException: typeof ctx.passThroughOnException,
      props: ctx.props,
      sameProps: Object.is(ctx.props, c.executionCtx.props),
      keys: Object.keys(ctx)
    })
  })
  app.get('/throws', (c) => {
    c.executionCtx.passThroughOnException()
    throw new Error('boom')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)
  t.same(await (await fetch(`${base}/v2/shape`)).json(), { waitUntil: 'function', passThroughOnException: 'function', props: {}, sameProps: true, keys: [] })
  const thrown = await fetch(`${base}/v2/throws`)
  t.equal(thrown.status, 500, 'an error after passThroughOnException() still reaches Fastify\'s error handler')
  t.match(await thrown.json(), { statusCode: 500, message: 'boom' })
  await server.close()
  t.equal(settled, true, 'close() waited for the thenable')
})

test('a fetch app that is not Hono gets the execution context as its third argument', async (t) => {
  const seen: string[] = []
  const app = {
    fetch (_request: Request, _env: unknown, ctx: { waitUntil: (promise: Promise<unknown>) => void }) {
      ctx.waitUntil(sleep(50).then(() => { seen.push('after') }))
      return new Response('plain')
    }
  }
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/plain' })
  const { base } = await listen(server)
  t.equal(await (await fetch(`${base}/plain/x`)).text(), 'plain')
  await server.close()
  t.same(seen, ['after'])
})
