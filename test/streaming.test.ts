import { test } from 'tap'
import { once } from 'node:events'
import { connect } from 'node:net'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

test('an SSE stream reaches the client event by event, and a disconnect runs onAbort', async (t) => {
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  let abortedResolve!: () => void
  const aborted = new Promise<void>((resolve) => { abortedResolve = resolve })
  const app = new Hono()
  app.get('/events', (c) => streamSSE(c, async (stream) => {
    await stream.writeSSE({ data: 'first', event: 'tick', id: '1' })
    await gate // the second event only comes after the client saw the first
    await stream.writeSSE({ data: 'second', event: 'tick', id: '2' })
  }))
  app.get('/forever', (c) => streamSSE(c, async (stream) => {
    stream.onAbort(() => abortedResolve())
    let i = 0
    while (!stream.aborted && i < 1000) {
      await stream.writeSSE({ data: String(i++) })
      await stream.sleep(10)
    }
  }))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/sse' })
  t.teardown(() => server.close())
  const { base, port } = await listen(server)

  const res = await fetch(base + '/sse/events')
  t.equal(res.headers.get('content-type'), 'text/event-stream')
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('id: 1\n\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value)
  }
  t.match(text, /event: tick\ndata: first\nid: 1\n\n/, 'the first event arrives before the second is written')
  release()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value)
  }
  t.match(text, /data: second\n/, 'then the second')

  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('GET /sse/forever HTTP/1.1\r\nHost: x\r\n\r\n')
  await once(socket, 'data')
  socket.destroy()
  await aborted
  t.pass('onAbort ran after the client disconnected')
})

test('a slow reader gets backpressure, not an unbounded buffer', async (t) => {
  let produced = 0
  const app = new Hono()
  app.get('/big', () => new Response(new ReadableStream({
    pull (controller) {
      if (produced >= 2000) { controller.close(); return }
      produced++
      controller.enqueue(new Uint8Array(64 * 1024))
    }
  }, { highWaterMark: 1 })))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/s' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('GET /s/big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  await once(socket, 'data')
  socket.pause()
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.ok(produced < 200, `the producer stopped early while the client did not read (${produced} of 2000 chunks made)`)
  socket.destroy()
})
