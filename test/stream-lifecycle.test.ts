import { test } from 'tap'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { connect as connectHttp2 } from 'node:http2'
import Fastify, { type FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import { stream as honoStream, streamSSE } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { listen, parseResponses, rawExchange } from './helpers/net'

// Streamed responses over their whole life: when the head leaves, what a
// client that leaves at each stage does to the stream and to Fastify's
// lifecycle, and what an error answer carries. @hono/node-server is the
// reference: it sends the head as soon as the app returned the Response, and
// cancels the stream whenever the connection closes.

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

interface Observed {
  onAbort: number
  callbackDone: number
  requestAbort: number
  response: number
}

function observed (): Observed {
  return { onAbort: 0, callbackDone: 0, requestAbort: 0, response: 0 }
}

/** A server whose Fastify hooks count into `seen`. */
async function serve (t: Tap.Test, app: Hono, seen: Observed = observed()): Promise<{ server: FastifyInstance, port: number, base: string, seen: Observed }> {
  const server = Fastify()
  server.addHook('onRequestAbort', async (request) => { seen.requestAbort++ })
  server.addHook('onResponse', async () => { seen.response++ })
  await server.register(fastifyHono, { app, prefix: '/s' })
  t.teardown(() => server.close())
  const { port, base } = await listen(server)
  return { server, port, base, seen }
}

/** Opens a raw connection, sends one GET, resolves with the socket and when each byte came. */
async function rawGet (port: number, path: string): Promise<{ socket: Socket, sentAt: number, firstByte: Promise<{ at: number, text: string }> }> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const sentAt = Date.now()
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
  const firstByte = once(socket, 'data').then(([chunk]) => ({ at: Date.now(), text: (chunk as Buffer).toString('latin1') }))
  firstByte.catch(() => {})
  return { socket, sentAt, firstByte }
}

async function until (check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) return false
    await delay(10)
  }
  return true
}

function sseApp (seen: Observed, firstEventAfter: number, returnAfter = 0): Hono {
  const app = new Hono()
  app.get('/sse', async (c) => {
    if (returnAfter > 0) await delay(returnAfter)
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => { seen.onAbort++ })
      await stream.sleep(firstEventAfter)
      if (!stream.aborted) await stream.writeSSE({ data: 'first' })
      seen.callbackDone++
    })
  })
  return app
}

test('SSE: the head goes out as soon as the app returns, not with the first event', async (t) => {
  const seen = observed()
  const served = await serve(t, sseApp(seen, 1500), seen)
  const { socket, sentAt, firstByte } = await rawGet(served.port, '/s/sse')
  const first = await firstByte
  t.ok(first.at - sentAt < 700, `the head arrived after ${first.at - sentAt} ms (the first event comes after 1500 ms)`)
  t.match(first.text, /^HTTP\/1\.1 200 OK\r\n/)
  t.match(first.text.toLowerCase(), /content-type: text\/event-stream/)
  t.notMatch(first.text, /data: first/, 'without the event')
  socket.destroy()
})

test('a plain stream whose first chunk is late: the head goes out at once too, chunked', async (t) => {
  const app = new Hono()
  app.get('/late', () => new Response(new ReadableStream({
    async pull (controller) {
      await delay(1500)
      controller.enqueue(new TextEncoder().encode('late'))
      controller.close()
    }
  }), { headers: { 'content-type': 'text/plain' } }))
  const served = await serve(t, app)
  const { socket, sentAt, firstByte } = await rawGet(served.port, '/s/late')
  const first = await firstByte
  t.ok(first.at - sentAt < 700, `the head arrived after ${first.at - sentAt} ms (the first chunk comes after 1500 ms)`)
  t.match(first.text.toLowerCase(), /transfer-encoding: chunked/)
  socket.destroy()
})

test('a short stream that is ready at once still gets a Content-Length, and one that failed at once a clean 500', async (t) => {
  const app = new Hono()
  app.get('/ready', () => new Response(new ReadableStream({
    start (controller) { controller.enqueue(new TextEncoder().encode('ready')); controller.close() }
  })))
  app.get('/ready-chunked', (c) => honoStream(c, async (s) => { await s.write('at once') }))
  app.get('/failed', () => new Response(new ReadableStream({ start (controller) { controller.error(new Error('at once')) } }), {
    headers: { 'cache-control': 'public, max-age=600', 'set-cookie': 'a=1' }
  }))
  const served = await serve(t, app)
  const wire = await rawExchange(served.port, 'GET /s/ready HTTP/1.1\r\nHost: x\r\n\r\nGET /s/failed HTTP/1.1\r\nHost: x\r\n\r\nGET /s/ready-chunked HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  const [ready, failed, chunked] = parseResponses(wire, ['GET', 'GET', 'GET'])
  t.equal(ready.framing, 'content-length')
  t.equal(ready.body, 'ready')
  t.equal(failed.status, 500)
  t.equal(failed.headers['cache-control'], undefined, 'no caching header on the 500')
  t.equal(failed.headers['set-cookie'], undefined, 'no cookie on the 500')
  t.equal(chunked.body, 'at once')
})

for (const stage of ['before the head', 'before the first chunk'] as const) {
  test(`the client leaves ${stage}: the stream is cancelled, onAbort runs, the handler finishes, onRequestAbort runs once`, async (t) => {
    const seen = observed()
    // Before the head: the app takes 400 ms to return the Response, and the client leaves at 100 ms.
    const served = await serve(t, sseApp(seen, 1000, stage === 'before the head' ? 400 : 0), seen)
    const { socket, firstByte } = await rawGet(served.port, '/s/sse')
    if (stage === 'before the head') await delay(100)
    else await firstByte
    socket.destroy()
    t.ok(await until(() => seen.onAbort === 1), 'onAbort ran')
    t.ok(await until(() => seen.callbackDone === 1), 'the stream callback finished')
    t.ok(await until(() => seen.requestAbort === 1), "Fastify's onRequestAbort ran")
    await delay(1200) // past the first event's time: nothing more happens
    t.same(seen, { onAbort: 1, callbackDone: 1, requestAbort: 1, response: 0 }, 'each once, and no onResponse, as for a Fastify route whose client left')
  })
}

test('the client leaves mid-stream: the same, once each', async (t) => {
  const seen = observed()
  const app = new Hono()
  app.get('/sse', (c) => streamSSE(c, async (stream) => {
    stream.onAbort(() => { seen.onAbort++ })
    for (let i = 0; i < 200 && !stream.aborted; i++) {
      await stream.writeSSE({ data: String(i) })
      await stream.sleep(10)
    }
    seen.callbackDone++
  }))
  const served = await serve(t, app, seen)
  const { socket, firstByte } = await rawGet(served.port, '/s/sse')
  await firstByte
  await delay(50)
  socket.destroy()
  t.ok(await until(() => seen.callbackDone === 1 && seen.requestAbort === 1))
  await delay(100)
  t.same(seen, { onAbort: 1, callbackDone: 1, requestAbort: 1, response: 0 })
})

/** An app whose stream fails before its first chunk, after a turn of the event loop, with headers an error must not carry. */
function failingApp (): Hono {
  const app = new Hono()
  const failing = (): ReadableStream<Uint8Array> => new ReadableStream({
    async pull () {
      await delay(30)
      throw new Error('the file went away')
    }
  })
  const appHeaders = {
    'cache-control': 'public, max-age=31536000',
    etag: '"v1"',
    'last-modified': 'Tue, 01 Dec 2026 00:00:00 GMT',
    'content-encoding': 'gzip',
    'set-cookie': 'session=app',
    'x-app': 'yes'
  }
  // An app-set Content-Length, as serveStatic sets: the response goes through reply.send.
  app.get('/length', () => new Response(failing(), { headers: { ...appHeaders, 'content-length': '1000' } }))
  app.get('/plain', () => new Response(failing(), { headers: appHeaders }))
  app.get('/after-first', () => {
    let sent = false
    return new Response(new ReadableStream({
      async pull (controller) {
        if (!sent) { sent = true; controller.enqueue(new TextEncoder().encode('partial')); return }
        await delay(30)
        controller.error(new Error('after the first chunk'))
      }
    }), { headers: { ...appHeaders, 'content-length': '1000' } })
  })
  return app
}

const forbiddenOnError = ['cache-control', 'etag', 'last-modified', 'content-encoding', 'set-cookie', 'x-app']

test('a stream through reply.send that fails before its first chunk: a 500 without the failed response headers', async (t) => {
  for (const withHook of [false, true]) {
    const server = Fastify()
    server.addHook('onRequest', async (request, reply) => { reply.header('x-from-hook', 'kept') })
    if (withHook) server.addHook('onSend', async (request, reply, payload) => payload)
    await server.register(fastifyHono, { app: failingApp(), prefix: '/s' })
    t.teardown(() => server.close())
    const { port } = await listen(server)
    for (const path of ['/s/length']) {
      const wire = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      const [res] = parseResponses(wire, ['GET'])
      const label = `${path}${withHook ? ' (onSend hook)' : ''}`
      t.equal(res.status, 500, label)
      for (const name of forbiddenOnError) t.equal(res.headers[name], undefined, `${label}: no ${name}`)
      t.same(res.headers['x-from-hook'], ['kept'], `${label}: what Fastify's hooks set stays`)
      t.equal(Number(res.headers['content-length'][0]), Buffer.byteLength(res.body, 'latin1'), `${label}: the 500 is framed by its own length`)
      t.match(JSON.parse(res.body), { statusCode: 500 }, `${label}: Fastify's error answer`)
    }
    if (withHook) {
      // A stream the hooks hand back untouched goes out as it does without
      // them, through the stream writer: its head at once, so a failure can
      // only cut the chunked body short.
      const plain = await rawExchange(port, 'GET /s/plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      t.match(plain, /^HTTP\/1\.1 200 /, '/s/plain (onSend hook): the head went out at once')
      t.match(plain, /transfer-encoding: chunked/i)
      t.notMatch(plain, /\r\n0\r\n\r\n$/, '/s/plain (onSend hook): no final chunk')
    }
    // After the first chunk: the connection is destroyed, the body is short of its length.
    const wire = await rawExchange(port, 'GET /s/after-first HTTP/1.1\r\nHost: x\r\n\r\n')
    t.match(wire, /^HTTP\/1\.1 200 /)
    t.ok(wire.endsWith('partial'), 'the connection closed after the partial body, short of its 1000 bytes')
  }
})

test('HTTP/2: through reply.send (an app-set length) a 500 without the failed response headers; a live stream sends its head at once, then is reset', async (t) => {
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app: failingApp(), prefix: '/s' })
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const address = server.server.address() as { port: number }
  const session = connectHttp2(`http://127.0.0.1:${address.port}`)
  t.teardown(() => session.close())

  const length = session.request({ ':path': '/s/length' })
  const [headers] = await once(length, 'response') as [Record<string, string | string[]>]
  length.resume()
  await once(length, 'end')
  t.equal(headers[':status'], 500, '/s/length')
  for (const name of forbiddenOnError) t.equal(headers[name], undefined, `/s/length: no ${name}`)

  // No length of the app's: the stream writer sends the head when the app
  // returns, as over HTTP/1, so a failure 30 ms later can only reset the stream.
  const plain = session.request({ ':path': '/s/plain' })
  const sentAt = Date.now()
  const [plainHeaders] = await once(plain, 'response') as [Record<string, string | string[]>]
  t.ok(Date.now() - sentAt < 25, `the head came before the failure (${Date.now() - sentAt} ms)`)
  t.equal(plainHeaders[':status'], 200)
  t.equal(plainHeaders['cache-control'], 'public, max-age=31536000', "the app's own headers, on its own head")
  plain.resume()
  plain.on('error', () => {}) // the reset, seen on 'close' below
  await new Promise((resolve) => plain.on('close', resolve))
  t.not(plain.rstCode, 0, `then the stream is reset with an error code (${plain.rstCode})`)
})
