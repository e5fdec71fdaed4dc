// fastify.close() with responses in flight on the mount: the event streams it
// is writing end (the app's onAbort runs, the client sees a complete response;
// other streams: test/shutdown-streams.test.ts),
// upgrades still in the app are refused, and close() resolves. Real sockets:
// raw node:net, node:http2 and a `ws` client.
import { test } from 'tap'
import { connect } from 'node:net'
import { connect as connectHttp2 } from 'node:http2'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { upgradeWebSocket } from 'fastify-hono/ws'
import WebSocket from 'ws'
import { listen, parseResponses } from './helpers/net'

interface Seen { aborted: number, opens: number }

function sseApp (seen: Seen, gate?: Promise<void>): Hono {
  const app = new Hono()
  app.get('/sse', async (c) => {
    if (gate !== undefined) await gate
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => { seen.aborted++ })
      let id = 0
      while (!stream.aborted) {
        await stream.writeSSE({ data: String(id++) })
        await stream.sleep(50)
      }
    })
  })
  // A custom reason phrase: the event stream goes out through reply.send (send-writer.ts).
  app.get('/reason', () => {
    let timer: NodeJS.Timeout | undefined
    const body = new ReadableStream<Uint8Array>({
      start (controller) {
        let id = 0
        controller.enqueue(new TextEncoder().encode(`data: tick ${id++}\n\n`))
        timer = setInterval(() => controller.enqueue(new TextEncoder().encode(`data: tick ${id++}\n\n`)), 50)
      },
      cancel () { clearInterval(timer); seen.aborted++ }
    })
    return new Response(body, { status: 200, statusText: 'Streaming', headers: { 'content-type': 'text/event-stream; charset=utf-8' } })
  })
  return app
}

/** Races `close()` against a deadline: resolves with the time it took, or rejects. */
async function closeWithin (server: { close: () => PromiseLike<unknown> }, ms: number): Promise<number> {
  const started = Date.now()
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    server.close(),
    new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`close() still pending after ${ms} ms`)), ms) })
  ])
  clearTimeout(timer)
  return Date.now() - started
}

/** A keep-alive HTTP/1.1 request on its own socket: everything received, and a promise of the socket's end. */
function openRaw (port: number, target: string): { wire: () => string, firstBytes: Promise<void>, ended: Promise<void> } {
  let wire = ''
  const socket = connect(port, '127.0.0.1', () => { socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`) })
  const firstBytes = new Promise<void>((resolve) => { socket.once('data', () => resolve()) })
  const ended = new Promise<void>((resolve, reject) => {
    socket.on('end', () => resolve())
    socket.on('error', reject)
  })
  socket.on('data', (chunk) => { wire += chunk.toString('latin1') })
  return { wire: () => wire, firstBytes, ended }
}

test('fastify.close() ends an SSE stream the stream writer sends (HTTP/1): onAbort runs, the chunked body ends, the connection closes', async (t) => {
  const seen: Seen = { aborted: 0, opens: 0 }
  const server = Fastify()
  await server.register(fastifyHono, { app: sseApp(seen), prefix: '/v2' })
  const { port } = await listen(server)
  const client = openRaw(port, '/v2/sse')
  await client.firstBytes
  await new Promise((resolve) => setTimeout(resolve, 120))
  const took = await closeWithin(server, 3000)
  t.ok(took < 3000, `close() resolved (${took} ms)`)
  await client.ended
  t.equal(seen.aborted, 1, 'the app\'s onAbort ran')
  const [response] = parseResponses(client.wire(), ['GET'])
  t.equal(response.status, 200)
  t.equal(response.framing, 'chunked', 'a complete chunked body: the terminator came')
  t.match(response.body, /^data: 0\n\n/)
})

test('fastify.close() ends an event stream that goes out through reply.send (HTTP/1, a custom reason phrase)', async (t) => {
  const seen: Seen = { aborted: 0, opens: 0 }
  const server = Fastify()
  await server.register(fastifyHono, { app: sseApp(seen), prefix: '/v2' })
  const { port } = await listen(server)
  const client = openRaw(port, '/v2/reason')
  await client.firstBytes
  await new Promise((resolve) => setTimeout(resolve, 120))
  const took = await closeWithin(server, 3000)
  t.ok(took < 3000, `close() resolved (${took} ms)`)
  await client.ended
  t.equal(seen.aborted, 1, 'the app\'s stream was cancelled')
  const [response] = parseResponses(client.wire(), ['GET'])
  t.same([response.status, response.reason], [200, 'Streaming'])
  t.equal(response.framing, 'chunked', 'a complete chunked body: the terminator came')
  t.match(response.body, /^data: tick 0\n\n/)
})

test('fastify.close() ends a stream on HTTP/2: the stream ends cleanly, onAbort runs, the session closes', async (t) => {
  const seen: Seen = { aborted: 0, opens: 0 }
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app: sseApp(seen), prefix: '/v2' })
  const { base } = await listen(server)
  const client = connectHttp2(base)
  t.teardown(() => client.destroy())
  const stream = client.request({ ':path': '/v2/sse' })
  let body = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => { body += chunk })
  const ended = new Promise<string>((resolve) => {
    stream.on('end', () => resolve('end'))
    stream.on('error', (err) => resolve('error ' + err.message))
  })
  await new Promise<void>((resolve) => stream.once('data', () => resolve()))
  const took = await closeWithin(server, 3000)
  t.ok(took < 3000, `close() resolved (${took} ms)`)
  t.equal(await ended, 'end', 'the stream ended cleanly, not reset')
  t.equal(seen.aborted, 1, 'the app\'s onAbort ran')
  t.match(body, /^data: 0\n\n/)
})

test('an event stream the app returns after close() began is ended at once', async (t) => {
  const seen: Seen = { aborted: 0, opens: 0 }
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  const server = Fastify()
  await server.register(fastifyHono, { app: sseApp(seen, gate), prefix: '/v2' })
  const { port } = await listen(server)
  let entered!: () => void
  const inApp = new Promise<void>((resolve) => { entered = resolve })
  server.server.once('request', () => { setImmediate(entered) })
  const client = openRaw(port, '/v2/sse')
  await inApp
  const closing = closeWithin(server, 3000)
  setTimeout(release, 50)
  const took = await closing
  t.ok(took < 3000, `close() resolved (${took} ms)`)
  await client.ended
  const [response] = parseResponses(client.wire(), ['GET'])
  t.equal(response.status, 200)
  t.equal(response.framing, 'chunked')
  t.equal(seen.aborted, 1)
})

test('a slow request in flight when close() starts completes, with Connection: close, and close() resolves', async (t) => {
  const app = new Hono()
  let entered!: () => void
  const inApp = new Promise<void>((resolve) => { entered = resolve })
  app.get('/slow', async (c) => {
    entered()
    await new Promise((resolve) => setTimeout(resolve, 300))
    return c.text('slow done')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)
  // fetch keeps the connection alive once the response is complete.
  const slow = fetch(`${base}/v2/slow`).then(async (response) => [response.status, response.headers.get('connection'), await response.text()])
  await inApp
  const closing = closeWithin(server, 3000)
  t.same(await slow, [200, 'close', 'slow done'])
  const took = await closing
  t.ok(took < 3000, `close() resolved (${took} ms)`)
})

function wsApp (seen: Seen, gate: Promise<void> | undefined, entered: () => void): Hono {
  const app = new Hono()
  app.use('/ws', async (_c, next) => {
    entered()
    if (gate !== undefined) await gate
    else await new Promise(() => {}) // a middleware that never finishes
    await next()
  })
  app.get('/ws', upgradeWebSocket(() => ({
    onOpen (_event, ws) { seen.opens++; ws.send('open') }
  })))
  return app
}

function upgradeOutcome (url: string): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url)
    ws.once('open', () => { resolve('open'); ws.terminate() })
    ws.once('unexpected-response', (_request, response) => { resolve(`refused ${response.statusCode ?? 0}`); response.resume() })
    ws.once('error', (err) => resolve(`error ${err.message}`))
  })
}

test('an upgrade still in the app\'s middleware when close() starts is refused with 503, never completed', async (t) => {
  const seen: Seen = { aborted: 0, opens: 0 }
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  let entered!: () => void
  const inApp = new Promise<void>((resolve) => { entered = resolve })
  const server = Fastify()
  await server.register(fastifyHono, { app: wsApp(seen, gate, entered), prefix: '/v2', websocket: { server: new WebSocket.Server({ noServer: true }) } })
  const { port } = await listen(server)
  const outcome = upgradeOutcome(`ws://127.0.0.1:${port}/v2/ws`)
  await inApp
  const closing = closeWithin(server, 3000)
  setTimeout(release, 50)
  t.equal(await outcome, 'refused 503')
  const took = await closing
  t.ok(took < 3000, `close() resolved (${took} ms)`)
  t.equal(seen.opens, 0, 'no WebSocket opened')
})

test('an upgrade whose middleware never finishes: close() is bounded by closeTimeout', async (t) => {
  const seen: Seen = { aborted: 0, opens: 0 }
  let entered!: () => void
  const inApp = new Promise<void>((resolve) => { entered = resolve })
  const server = Fastify()
  await server.register(fastifyHono, { app: wsApp(seen, undefined, entered), prefix: '/v2', websocket: { server: new WebSocket.Server({ noServer: true }), closeTimeout: 300 } })
  const { port } = await listen(server)
  const outcome = upgradeOutcome(`ws://127.0.0.1:${port}/v2/ws`)
  await inApp
  const took = await closeWithin(server, 4000)
  t.ok(took >= 250 && took < 4000, `close() resolved after closeTimeout (${took} ms)`)
  t.match(await outcome, /^(error|refused)/, 'the client was not left hanging')
  t.equal(seen.opens, 0)
})
