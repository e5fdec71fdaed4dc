import { test } from 'tap'
import { once } from 'node:events'
import { connect } from 'node:net'
import type { ServerResponse } from 'node:http'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { stream } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { listen, rawExchange, rawRequest } from './helpers/net'

// Any unhandled rejection in this process fails the file.
const unhandled: unknown[] = []
process.on('unhandledRejection', (reason) => { unhandled.push(reason) })

test('the client disconnects mid-stream: the stream is cancelled, onAbort runs, nothing is left behind', async (t) => {
  let aborted!: () => void
  const abortedPromise = new Promise<void>((resolve) => { aborted = resolve })
  let outgoing: ServerResponse | undefined
  const responseErrors: Error[] = []
  const app = new Hono()
  app.get('/slow', (c) => {
    outgoing = c.env.outgoing as ServerResponse
    outgoing.on('error', (err) => responseErrors.push(err))
    return stream(c, async (s) => {
      s.onAbort(() => aborted())
      for (let i = 0; i < 500; i++) {
        if (s.aborted) return
        await s.write(`chunk ${i}\n`)
        await s.sleep(5)
      }
    })
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/f' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('GET /f/slow HTTP/1.1\r\nHost: x\r\n\r\n')
  await once(socket, 'data')
  socket.destroy()
  await abortedPromise
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.pass('onAbort ran')
  t.same(responseErrors.filter((err) => (err as NodeJS.ErrnoException).code === 'ERR_STREAM_WRITE_AFTER_END'), [], 'no write after end')
  t.equal(outgoing!.listenerCount('drain'), 0, 'no drain listener left on the response')
  t.same(unhandled, [], 'no unhandled rejection')
})

test('the client aborts while uploading: the body read rejects and nothing hangs', async (t) => {
  const outcomes: string[] = []
  let settled!: () => void
  let pending = 2
  const allSettled = new Promise<void>((resolve) => { settled = resolve })
  const done = (what: string): void => { outcomes.push(what); if (--pending === 0) settled() }
  const app = new Hono()
  app.post('/text', async (c) => {
    try { await c.req.text(); done('text resolved') } catch { done('text rejected') }
    return c.text('never sent')
  })
  app.post('/stream', async (c) => {
    try {
      const reader = c.req.raw.body!.getReader()
      for (;;) { const { done: end } = await reader.read(); if (end) break }
      done('stream resolved')
    } catch { done('stream rejected') }
    return c.text('never sent')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/f' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  for (const path of ['/f/text', '/f/stream']) {
    const socket = connect(port, '127.0.0.1')
    await once(socket, 'connect')
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n` + 'x'.repeat(1000))
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.destroy()
  }
  await allSettled
  t.same(outcomes.sort(), ['stream rejected', 'text rejected'])
  t.same(unhandled, [], 'no unhandled rejection')
})

test('handlers that throw, synchronously or not: a 500 and the process lives', async (t) => {
  const app = new Hono()
  app.get('/sync', () => { throw new Error('sync') })
  app.get('/async', async () => { await Promise.resolve(); throw new Error('async') })
  app.get('/ok', (c) => c.text('alive'))
  const rethrowing = new Hono()
  rethrowing.get('/sync', () => { throw new Error('sync') })
  rethrowing.get('/async', async () => { throw new Error('async') })
  rethrowing.onError((err) => { throw err })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/hono' })
  await server.register(fastifyHono, { app: rethrowing, prefix: '/fastify' })
  await server.register(fastifyHono, { app: { fetch: async () => { throw new Error('fetch rejects') } } as never, prefix: '/reject' })
  await server.register(fastifyHono, { app: { fetch: () => 42 } as never, prefix: '/number' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const originalError = console.error
  console.error = () => {} // Hono's default onError prints the stack
  t.teardown(() => { console.error = originalError })
  for (const path of ['/hono/sync', '/hono/async', '/fastify/sync', '/fastify/async', '/reject/x', '/number/x']) {
    const res = await rawRequest(port, 'GET', path)
    t.equal(res.status, 500, path)
    t.equal(Number(res.headers['content-length'][0]), Buffer.byteLength(res.body, 'latin1'), `${path}: framed`)
  }
  t.equal((await rawRequest(port, 'GET', '/hono/ok')).body, 'alive')
  t.same(unhandled, [], 'no unhandled rejection')
})

test('a response stream that errors: before its first chunk a 500, after it a truncated response', async (t) => {
  const app = new Hono()
  app.get('/early', () => new Response(new ReadableStream({
    pull () { throw new Error('before the first chunk') }
  })))
  app.get('/late', () => {
    let sent = false
    return new Response(new ReadableStream({
      async pull (controller) {
        if (!sent) { sent = true; controller.enqueue(new TextEncoder().encode('partial')); return }
        await new Promise((resolve) => setTimeout(resolve, 20))
        controller.error(new Error('after the first chunk'))
      }
    }))
  })
  const server = Fastify({ logger: false })
  await server.register(fastifyHono, { app, prefix: '/s' })
  t.teardown(() => server.close())
  const { port, base } = await listen(server)

  const early = await rawRequest(port, 'GET', '/s/early')
  t.equal(early.status, 500)
  t.equal(early.framing, 'content-length')

  // Raw: the connection is destroyed, and the chunked body never gets its terminating chunk.
  const wire = await rawExchange(port, 'GET /s/late HTTP/1.1\r\nHost: x\r\n\r\n')
  t.match(wire, /^HTTP\/1\.1 200 /)
  t.match(wire, /partial/)
  t.notMatch(wire, /\r\n0\r\n\r\n$/, 'no final chunk: the client can tell the body is incomplete')
  await t.rejects((async () => { const res = await fetch(base + '/s/late'); await res.text() })(), 'fetch reports the truncation')
  t.same(unhandled, [], 'no unhandled rejection')
})
