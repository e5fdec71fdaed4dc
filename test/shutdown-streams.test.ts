// fastify.close() with a finite stream in flight: it is left to finish within
// the closeTimeout option; one still open when that runs out is cut so that
// the client can tell (HTTP/1: no last chunk, or a short Content-Length body,
// the connection closed; HTTP/2: the stream reset), and the cut is logged
// once at warn. Real sockets: raw node:net and node:http2.
import { test } from 'tap'
import { connect } from 'node:net'
import { connect as connectHttp2, constants as http2Constants } from 'node:http2'
import type { Writable } from 'node:stream'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { stream } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { listen, parseResponses } from './helpers/net'
import { logCollector } from './helpers/compat'

const encoder = new TextEncoder()

/** A Fastify logger that keeps its JSON lines at warn and above. */
function warnLog (): { lines: Array<Record<string, unknown>>, logger: { level: string, stream: Writable } } {
  const { stream, lines } = logCollector()
  return { lines, logger: { level: 'warn', stream } }
}

interface Seen { aborted: number, finished: number }

/**
 * The app: `/five`, Hono's stream() writing five chunks 100 ms apart (as a
 * download or an NDJSON export would); `/endless`, a text stream that never
 * ends; `/sized`, an endless stream under a Content-Length it never reaches;
 * `/reason`, an endless stream with a custom reason phrase, so that it goes
 * out through reply.send.
 */
function streamApp (seen: Seen, gate?: Promise<void>): Hono {
  const app = new Hono()
  app.get('/five', async (c) => {
    if (gate !== undefined) await gate
    return stream(c, async (s) => {
      s.onAbort(() => { seen.aborted++ })
      for (let i = 0; i < 5; i++) {
        await s.write(`chunk ${i}\n`)
        await s.sleep(100)
      }
      seen.finished++
    })
  })
  app.get('/endless', async (c) => {
    if (gate !== undefined) await gate
    return stream(c, async (s) => {
      // A flag of its own: the stream's `aborted` field is newer than hono 4.1.
      const state = { aborted: false }
      s.onAbort(() => { state.aborted = true; seen.aborted++ })
      for (let i = 0; !state.aborted; i++) {
        await s.write(`line ${i}\n`)
        await s.sleep(30)
      }
    })
  })
  app.get('/sized', () => new Response(endless(seen), { headers: { 'content-type': 'application/octet-stream', 'content-length': '1000000' } }))
  app.get('/reason', () => new Response(endless(seen), { status: 200, statusText: 'Exporting', headers: { 'content-type': 'application/x-ndjson' } }))
  return app
}

function endless (seen: Seen): ReadableStream<Uint8Array> {
  let timer: NodeJS.Timeout | undefined
  return new ReadableStream<Uint8Array>({
    start (controller) {
      let id = 0
      controller.enqueue(encoder.encode(`{"row":${id++}}\n`))
      timer = setInterval(() => controller.enqueue(encoder.encode(`{"row":${id++}}\n`)), 30)
    },
    cancel () { clearInterval(timer); seen.aborted++ }
  })
}

/** A keep-alive HTTP/1.1 request on its own socket: what it received, and how the socket ended. */
function openRaw (port: number, target: string): { wire: () => string, firstBytes: Promise<void>, ended: Promise<'end' | 'close'> } {
  let wire = ''
  const socket = connect(port, '127.0.0.1', () => { socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`) })
  const firstBytes = new Promise<void>((resolve) => { socket.once('data', () => resolve()) })
  const ended = new Promise<'end' | 'close'>((resolve) => {
    socket.on('end', () => resolve('end'))
    socket.on('close', () => resolve('close'))
    socket.on('error', () => {})
  })
  socket.on('data', (chunk) => { wire += chunk.toString('latin1') })
  return { wire: () => wire, firstBytes, ended }
}

/** The chunks of a chunked body as received, and whether its terminator came. */
function chunkedBody (wire: string): { head: string, body: string, terminated: boolean } {
  const headEnd = wire.indexOf('\r\n\r\n')
  const head = wire.slice(0, headEnd)
  let at = headEnd + 4
  let body = ''
  for (;;) {
    const sizeEnd = wire.indexOf('\r\n', at)
    if (sizeEnd === -1) return { head, body, terminated: false }
    const size = parseInt(wire.slice(at, sizeEnd), 16)
    if (size === 0) return { head, body, terminated: wire.slice(sizeEnd, sizeEnd + 4) === '\r\n\r\n' }
    body += wire.slice(sizeEnd + 2, sizeEnd + 2 + size)
    at = sizeEnd + 2 + size + 2
  }
}

/** Waits (up to 2 s) for what the server does once the client has seen the cut: the writer's close handler runs a moment later. */
async function until (done: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (Date.now() - started > 2000) throw new Error(`still waiting: ${what}`)
  }
}

async function timed (promise: PromiseLike<unknown>): Promise<number> {
  const started = Date.now()
  await promise
  return Date.now() - started
}

test('a finite stream in flight at close() finishes: every chunk, then the terminator, then the connection closes', async (t) => {
  const seen: Seen = { aborted: 0, finished: 0 }
  const server = Fastify()
  await server.register(fastifyHono, { app: streamApp(seen), prefix: '/v2', closeTimeout: 5000 })
  const { port } = await listen(server)
  const client = openRaw(port, '/v2/five')
  await client.firstBytes
  const took = await timed(server.close())
  t.equal(await client.ended, 'end', 'the server ended the connection after the response')
  const [response] = parseResponses(client.wire(), ['GET'])
  t.equal(response.status, 200)
  t.equal(response.framing, 'chunked')
  t.equal(response.body, 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n', 'all five chunks')
  t.equal(seen.finished, 1, 'the app wrote to the end')
  t.equal(seen.aborted, 0, 'the app was not cancelled')
  t.ok(took >= 250 && took < 3000, `close() waited for the stream (${took} ms)`)
})

test('a finite stream that starts after close() began also finishes', async (t) => {
  const seen: Seen = { aborted: 0, finished: 0 }
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  const server = Fastify()
  await server.register(fastifyHono, { app: streamApp(seen, gate), prefix: '/v2' })
  const { port } = await listen(server)
  let entered!: () => void
  const inApp = new Promise<void>((resolve) => { entered = resolve })
  server.server.once('request', () => { setImmediate(entered) })
  const client = openRaw(port, '/v2/five')
  await inApp
  const closing = server.close()
  setTimeout(release, 50)
  await closing
  await client.ended
  const [response] = parseResponses(client.wire(), ['GET'])
  t.equal(response.body, 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n', 'all five chunks')
  t.equal(response.headers.connection?.[0], 'close', 'announced Connection: close')
  t.equal(seen.finished, 1)
})

test('past closeTimeout a chunked stream is cut: no terminator, the connection destroyed, onAbort runs, one warning', async (t) => {
  const seen: Seen = { aborted: 0, finished: 0 }
  const { lines, logger } = warnLog()
  const server = Fastify({ logger })
  await server.register(fastifyHono, { app: streamApp(seen), prefix: '/v2', closeTimeout: 300, routeName: true })
  const { port } = await listen(server)
  const client = openRaw(port, '/v2/endless')
  await client.firstBytes
  await new Promise((resolve) => setTimeout(resolve, 100))
  const took = await timed(server.close())
  await client.ended
  t.ok(took >= 250 && took < 2000, `close() resolved once the bound ran out (${took} ms)`)
  const { head, body, terminated } = chunkedBody(client.wire())
  t.match(head, /^HTTP\/1\.1 200 OK\r\n/)
  t.match(head, /transfer-encoding: chunked/i)
  t.match(body, /^line 0\nline 1\n/)
  t.equal(terminated, false, 'no last chunk: the client can tell the body is incomplete')
  t.throws(() => parseResponses(client.wire(), ['GET']), 'a strict parser refuses the body')
  await until(() => seen.aborted === 1, 'the app\'s onAbort ran')
  t.equal(seen.aborted, 1, 'the app\'s onAbort ran')
  const cuts = lines.filter((line) => line.msg === 'response stream cut: still open when fastify.close() ran out of closeTimeout')
  t.equal(cuts.length, 1, 'one warning')
  t.equal(cuts[0]?.level, 40, 'at warn')
  t.equal(cuts[0]?.route, '/v2/endless', 'the route')
  t.equal(cuts[0]?.method, 'GET')
  t.equal(cuts[0]?.closeTimeout, 300)
  t.match(cuts[0]?.reqId, /\S/, 'the request id')
  t.equal(cuts[0]?.bytes, Buffer.byteLength(body), 'the bytes sent')
  t.ok(typeof cuts[0]?.ms === 'number' && (cuts[0].ms as number) >= 300, `how long it ran (${String(cuts[0]?.ms)} ms)`)
})

test('past closeTimeout a Content-Length stream is cut short, and the connection closes', async (t) => {
  const seen: Seen = { aborted: 0, finished: 0 }
  const server = Fastify()
  await server.register(fastifyHono, { app: streamApp(seen), prefix: '/v2', closeTimeout: 200 })
  const { port } = await listen(server)
  const client = openRaw(port, '/v2/sized')
  await client.firstBytes
  await server.close()
  await client.ended
  const wire = client.wire()
  const headEnd = wire.indexOf('\r\n\r\n')
  t.match(wire.slice(0, headEnd), /content-length: 1000000/i)
  const received = wire.length - headEnd - 4
  t.ok(received > 0 && received < 1_000_000, `a short body (${received} of 1000000 bytes)`)
  t.throws(() => parseResponses(wire, ['GET']), /shorter than content-length/)
  await until(() => seen.aborted === 1, 'the app\'s stream was cancelled')
  t.equal(seen.aborted, 1)
})

test('past closeTimeout a stream that goes out through reply.send (a custom reason phrase) is cut too', async (t) => {
  const seen: Seen = { aborted: 0, finished: 0 }
  const { lines, logger } = warnLog()
  const server = Fastify({ logger })
  await server.register(fastifyHono, { app: streamApp(seen), prefix: '/v2', closeTimeout: 200 })
  const { port } = await listen(server)
  const client = openRaw(port, '/v2/reason')
  await client.firstBytes
  await server.close()
  await client.ended
  const { head, body, terminated } = chunkedBody(client.wire())
  t.match(head, /^HTTP\/1\.1 200 Exporting\r\n/)
  t.match(body, /^\{"row":0\}\n/)
  t.equal(terminated, false, 'no last chunk')
  await until(() => seen.aborted === 1, 'the app\'s stream was cancelled')
  t.equal(seen.aborted, 1, 'the app\'s stream was cancelled')
  t.equal(lines.filter((line) => line.level === 40 && /stream cut/.test(String(line.msg))).length, 1, 'one warning')
})

test('an endless stream that starts after close() began is cut when the bound runs out', async (t) => {
  const seen: Seen = { aborted: 0, finished: 0 }
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  const server = Fastify()
  await server.register(fastifyHono, { app: streamApp(seen, gate), prefix: '/v2', closeTimeout: 300 })
  const { port } = await listen(server)
  let entered!: () => void
  const inApp = new Promise<void>((resolve) => { entered = resolve })
  server.server.once('request', () => { setImmediate(entered) })
  const client = openRaw(port, '/v2/endless')
  await inApp
  const closing = timed(server.close())
  setTimeout(release, 50)
  const took = await closing
  await client.ended
  const { body, terminated } = chunkedBody(client.wire())
  t.match(body, /^line 0\n/, 'it started')
  t.equal(terminated, false, 'cut, not ended')
  t.ok(took >= 250 && took < 2000, `close() resolved at the bound (${took} ms)`)
})

test('HTTP/2: a finite stream in flight at close() finishes; past closeTimeout an endless one is reset', async (t) => {
  const seen: Seen = { aborted: 0, finished: 0 }
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app: streamApp(seen), prefix: '/v2', closeTimeout: 800 })
  const { base } = await listen(server)
  const client = connectHttp2(base)
  t.teardown(() => client.destroy())
  client.on('error', () => {})
  const request = (path: string): { body: () => string, rstCode: () => number | undefined, first: Promise<void>, outcome: Promise<string> } => {
    const stream = client.request({ ':path': path })
    let body = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => { body += chunk })
    const first = new Promise<void>((resolve) => stream.once('data', () => resolve()))
    const outcome = new Promise<string>((resolve) => {
      stream.on('end', () => resolve('end'))
      stream.on('error', (err: Error & { code?: string }) => resolve(`error ${err.code ?? ''} ${err.message}`))
      stream.on('close', () => resolve(`close ${stream.rstCode ?? ''}`))
    })
    return { body: () => body, rstCode: () => stream.rstCode, first, outcome }
  }
  const five = request('/v2/five')
  const endlessStream = request('/v2/endless')
  await Promise.all([five.first, endlessStream.first])
  await server.close()
  t.equal(await five.outcome, 'end', 'the finite stream ended cleanly')
  t.equal(five.body(), 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n')
  const outcome = await endlessStream.outcome
  t.match(outcome, /^error ERR_HTTP2_STREAM_ERROR .*NGHTTP2_INTERNAL_ERROR/, `the endless one was reset (${outcome})`)
  t.equal(endlessStream.rstCode(), http2Constants.NGHTTP2_INTERNAL_ERROR)
  t.match(endlessStream.body(), /^line 0\n/)
  t.equal(seen.finished, 1)
  await until(() => seen.aborted === 1, 'the endless stream\'s onAbort ran')
  t.equal(seen.aborted, 1, 'the endless stream\'s onAbort ran')
})

test('closeTimeout must be an integer number of milliseconds: registration fails naming it', async (t) => {
  for (const closeTimeout of [-1, 1.5, '5000', 2 ** 31, Number.NaN]) {
    const server = Fastify()
    await t.rejects(async () => { await server.register(fastifyHono, { app: new Hono(), closeTimeout: closeTimeout as number }) }, { code: 'FST_ERR_HONO_INVALID_OPTION', message: /option "closeTimeout" must be an integer number of milliseconds/ }, String(closeTimeout))
  }
})
