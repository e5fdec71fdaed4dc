import { test } from 'tap'
import { Writable } from 'node:stream'
import { connect as connectHttp2 } from 'node:http2'
import { once } from 'node:events'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import fastifyHono from 'fastify-hono'
import { listen, rawExchange } from './helpers/net'

// At the debug level, each mounted request logs which way its response went
// and, for reply.send, the guard that sent it there; at info, nothing.

function app (): Hono {
  const hono = new Hono()
  hono.get('/text', (c) => c.text('hello'))
  hono.get('/json', (c) => c.json({ a: 1 }))
  hono.get('/native', () => new Response(new Blob(['blob body'])))
  hono.get('/sse', (c) => streamSSE(c, async (stream) => { await stream.writeSSE({ data: 'x' }) }))
  hono.get('/length', () => new Response('abc', { headers: { 'content-length': '3' } }))
  hono.get('/reason', () => new Response('abc', { status: 200, statusText: 'Fine' }))
  hono.get('/stream', () => new Response(new ReadableStream({
    async pull (controller) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      controller.enqueue(new TextEncoder().encode('late'))
      controller.close()
    }
  })))
  return hono
}

interface Line { msg: string, wayOut?: string, guard?: string, onSendHooks?: number, reqId?: string, req?: { url?: string } }

async function serverLogging (level: string, options: { http2?: boolean } = {}): Promise<{ lines: Line[], server: ReturnType<typeof Fastify> }> {
  const lines: Line[] = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text))
      callback()
    }
  })
  const server = (options.http2 === true ? Fastify({ http2: true, logger: { level, stream } }) : Fastify({ logger: { level, stream } })) as unknown as ReturnType<typeof Fastify>
  await server.register(fastifyHono, { app: app(), prefix: '/m' })
  await server.register(async (scope) => {
    scope.addHook('onSend', async (request, reply, payload) => payload)
    await scope.register(fastifyHono, { app: app(), prefix: '/hooked' })
  })
  return { lines, server }
}

/** The way-out lines, keyed by the URL their request logged on arrival. */
function waysByUrl (lines: Line[]): Record<string, string> {
  const urlOf = new Map<string, string>()
  for (const line of lines) if (line.req?.url !== undefined && line.reqId !== undefined) urlOf.set(line.reqId, line.req.url)
  const ways: Record<string, string> = {}
  for (const line of lines) {
    if (line.wayOut === undefined) continue
    const hooks = line.onSendHooks === undefined ? '' : ` after ${line.onSendHooks} onSend hook(s)`
    ways[urlOf.get(line.reqId!) ?? '?'] = (line.guard === undefined ? line.wayOut : `${line.wayOut}: ${line.guard}`) + hooks
  }
  return ways
}

test('debug: each response says which way it went, and why when it took reply.send', async (t) => {
  const { lines, server } = await serverLogging('debug')
  t.teardown(() => server.close())
  const { port, base } = await listen(server)
  for (const path of ['/m/text', '/m/json', '/m/native', '/m/sse', '/m/length', '/m/reason', '/m/stream', '/hooked/text', '/hooked/sse', '/hooked/length']) {
    const res = await fetch(base + path)
    await res.text()
  }
  await rawExchange(port, 'GET /m/stream HTTP/1.0\r\nHost: x\r\n\r\n')
  await new Promise((resolve) => setTimeout(resolve, 50))
  const ways = waysByUrl(lines)
  t.same(ways, {
    '/m/text': 'fast writer',
    '/m/json': 'fast writer',
    '/m/native': 'fast writer',
    '/m/sse': 'stream writer',
    '/m/length': 'reply.send: content-length set by the app',
    '/m/reason': 'reply.send: custom statusText',
    '/m/stream': 'reply.send: no chunked framing (HTTP/1.0)',
    // The plugin runs the onSend hooks itself, then writes as it would without them.
    '/hooked/text': 'fast writer after 1 onSend hook(s)',
    '/hooked/sse': 'stream writer after 1 onSend hook(s)',
    '/hooked/length': 'fast writer: content-length set by the app after 1 onSend hook(s)'
  })
  const line = lines.find((l) => l.guard === 'content-length set by the app' && l.onSendHooks === 1)
  t.equal(line?.msg, 'fastify-hono: fast writer, after 1 onSend hook, because of content-length set by the app', 'the message names the way, the hooks and the guard')
  const plain = lines.find((l) => l.guard === 'content-length set by the app' && l.onSendHooks === undefined)
  t.equal(plain?.msg, 'fastify-hono: reply.send, because of content-length set by the app', 'without hooks: the way and the guard')
})

test('debug, HTTP/2: reply.send, because of HTTP/2', async (t) => {
  const { lines, server } = await serverLogging('debug', { http2: true })
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const session = connectHttp2(`http://127.0.0.1:${(server.server.address() as { port: number }).port}`)
  t.teardown(() => session.close())
  const stream = session.request({ ':path': '/m/text' })
  stream.resume()
  await once(stream, 'end')
  t.same(lines.filter((l) => l.wayOut !== undefined).map((l) => [l.wayOut, l.guard]), [['reply.send', 'HTTP/2']])
})

test('info: no way-out line at all', async (t) => {
  const { lines, server } = await serverLogging('info')
  t.teardown(() => server.close())
  const { base } = await listen(server)
  for (const path of ['/m/text', '/m/sse', '/m/length', '/hooked/text']) await (await fetch(base + path)).text()
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(lines.some((l) => l.msg === 'request completed'), 'the server logs at info')
  t.same(lines.filter((l) => l.wayOut !== undefined || l.msg.startsWith('fastify-hono')), [], 'but nothing about the way out')
})
