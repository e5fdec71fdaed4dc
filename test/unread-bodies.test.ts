// Request bodies the app answers without reading to their end: once the
// response is out, the rest is read and thrown away within bounds
// (drainTimeout, drainLimit), then the connection closes; over HTTP/2 the
// stream is closed. Real sockets throughout: what matters is the connection.
import { test } from 'tap'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { connect as connectHttp2, constants as http2Constants } from 'node:http2'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'
import { WireConnection } from './helpers/wire-client'

function unauthorizedApp (): Hono {
  const app = new Hono()
  app.post('/deny', (c) => c.text('Unauthorized', 401))
  app.post('/first-chunk', async (c) => {
    // Touches the body, reads one chunk, then answers.
    const reader = c.req.raw.body!.getReader()
    const first = await reader.read()
    return c.text('first ' + (first.value?.byteLength ?? 0))
  })
  app.post('/echo', async (c) => c.text(await c.req.text()))
  return app
}

/** Resolves with the ms from now until the connection closes, or null after `within` ms. */
function closedWithin (connection: WireConnection, within: number): Promise<number | null> {
  const started = Date.now()
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      if (connection.closed) { clearInterval(poll); resolve(Date.now() - started) } else if (Date.now() - started > within) { clearInterval(poll); resolve(null) }
    }, 10)
  })
}

test('a stalled upload: the connection closes within drainTimeout of the response', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: unauthorizedApp(), prefix: '/default' })
  await server.register(fastifyHono, { app: unauthorizedApp(), prefix: '/short', drainTimeout: 100 })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  for (const [prefix, bound] of [['/default', 500], ['/short', 100]] as const) {
    for (const [kind, head] of [
      ['chunked', 'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'],
      ['declared length', 'Content-Length: 1000\r\n\r\nhello'],
      ['nothing of the body yet', 'Content-Length: 1000\r\n\r\n']
    ]) {
      const connection = await WireConnection.open(port)
      connection.write(`POST ${prefix}/deny HTTP/1.1\r\nHost: x\r\n${head}`)
      const result = await connection.read('POST', 5000)
      t.equal(result.kind === 'response' && result.response.status, 401, `${prefix}, ${kind}: answered`)
      // The client sends nothing more.
      const after = await closedWithin(connection, 3000)
      t.ok(after !== null && after >= bound - 50 && after < bound + 1000, `${prefix}, ${kind}: closed ${String(after)} ms after the response (bound ${bound})`)
      connection.destroy()
    }
  }

  // The same once the app touched the body and stopped reading.
  const connection = await WireConnection.open(port)
  connection.write('POST /short/first-chunk HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
  const result = await connection.read('POST', 5000)
  t.equal(result.kind === 'response' && result.response.body, 'first 5')
  t.not(await closedWithin(connection, 3000), null, 'a body read in part: closed too')
  connection.destroy()
})

test('an endless upload: at most drainLimit bytes are read after the response, then the connection closes', async (t) => {
  const server = Fastify({ bodyLimit: 64 * 1024 * 1024 })
  const limit = 1024 * 1024
  await server.register(fastifyHono, { app: unauthorizedApp(), drainLimit: limit, drainTimeout: 60_000 })
  t.teardown(() => server.close())
  const sockets: Socket[] = []
  server.server.on('connection', (socket: Socket) => sockets.push(socket))
  const { port } = await listen(server)

  const client = connect(port, '127.0.0.1')
  await once(client, 'connect')
  let response = ''
  client.on('data', (chunk: Buffer) => { response += chunk.toString('latin1') })
  client.on('error', () => {}) // EPIPE or ECONNRESET once the server has closed
  client.write('POST /deny HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')
  const chunk = Buffer.from('10000\r\n' + 'x'.repeat(0x10000) + '\r\n', 'latin1')
  const deadline = Date.now() + 10_000
  let sent = 0
  while (!client.destroyed && Date.now() < deadline) {
    const flushed = client.write(chunk)
    sent += chunk.length
    await new Promise<void>((resolve) => {
      if (flushed) { setImmediate(resolve); return }
      const timer = setTimeout(resolve, 20)
      client.once('drain', () => { clearTimeout(timer); resolve() })
    })
  }
  const closed = client.destroyed
  client.destroy()
  t.ok(closed, `the server closed the connection (the client had sent ${(sent / 1048576).toFixed(1)} MiB)`)
  t.match(response, /^HTTP\/1\.1 401 /, 'after answering')
  const [socket] = sockets
  // The head, what Node buffered before the response (16 KiB), the limit,
  // and the chunk in which the count went past it.
  t.ok(socket.bytesRead < limit + 256 * 1024, `the server read ${socket.bytesRead} bytes (limit ${limit})`)
})

test('a declared length over drainLimit: the response says Connection: close and the connection closes at once', async (t) => {
  const server = Fastify({ bodyLimit: 64 * 1024 * 1024 })
  await server.register(fastifyHono, { app: unauthorizedApp(), drainLimit: 1000, drainTimeout: 60_000 })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const connection = await WireConnection.open(port)
  connection.write('POST /deny HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nhello')
  const result = await connection.read('POST', 5000)
  t.equal(result.kind, 'response')
  if (result.kind !== 'response') return
  t.equal(result.response.status, 401)
  t.same(result.response.headers.connection, ['close'], 'announced')
  t.not(await closedWithin(connection, 2000), null, 'and closed')
  connection.destroy()

  // Within the limit: kept alive, the rest drained.
  const within = await WireConnection.open(port)
  within.write('POST /deny HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhello')
  const first = await within.read('POST', 5000)
  t.same(first.kind === 'response' && first.response.headers.connection, ['keep-alive'], 'not announced within the limit')
  within.write('x'.repeat(995) + 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nnext')
  const second = await within.read('POST', 5000)
  t.equal(second.kind === 'response' && second.response.body, 'next', 'the connection served the next request')
  within.destroy()
})

test('unread leftovers within the bounds: the connection stays open for the next request', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: unauthorizedApp(), drainTimeout: 2000 })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const connection = await WireConnection.open(port)
  const cases: Array<[string, string, string]> = [
    // [first request, what follows it after the response, its answer's body]
    ['POST /deny HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello', 'world', 'Unauthorized'],
    ['POST /deny HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n', '5\r\nworld\r\n0\r\n\r\n', 'Unauthorized'],
    ['POST /first-chunk HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nhello', 'x'.repeat(99_995), 'first 5'],
    ['POST /deny HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello', '', 'Unauthorized']
  ]
  for (const [request, rest, body] of cases) {
    connection.write(request)
    const answer = await connection.read('POST', 5000)
    t.equal(answer.kind === 'response' && answer.response.body, body)
    // The rest arrives a little after the response.
    await new Promise((resolve) => setTimeout(resolve, 100))
    connection.write(rest + 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nnext')
    const next = await connection.read('POST', 5000)
    t.equal(next.kind === 'response' && next.response.body, 'next', `after ${JSON.stringify(request.split('\r\n')[2])}: the next request is served`)
  }
  t.notOk(connection.closed, 'one connection for all of them')
  connection.destroy()
})

test('invalid drainTimeout and drainLimit fail registration, naming the option', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['drainTimeout', -1, /option "drainTimeout" must be an integer number of milliseconds from 0 to 2147483647, got -1/],
    ['drainTimeout', 1.5, /option "drainTimeout"/],
    ['drainTimeout', '500', /option "drainTimeout".*got "500"/],
    ['drainTimeout', Number.NaN, /option "drainTimeout".*got NaN/],
    ['drainTimeout', 2 ** 31, /option "drainTimeout"/],
    ['drainLimit', -1, /option "drainLimit" must be a non-negative integer number of bytes, got -1/],
    ['drainLimit', 0.5, /option "drainLimit"/],
    ['drainLimit', Number.POSITIVE_INFINITY, /option "drainLimit".*got Infinity/],
    ['drainLimit', '1mb', /option "drainLimit"/],
    ['drainLimit', null, /option "drainLimit"/]
  ]
  for (const [name, value, message] of cases) {
    const server = Fastify()
    server.register(fastifyHono, { app: new Hono(), [name]: value } as never)
    await t.rejects(server.ready(), message, `${name}: ${String(value)}`)
  }
  const server = Fastify()
  server.register(fastifyHono, { app: new Hono(), drainTimeout: 0, drainLimit: 0 })
  await t.resolves(server.ready(), '0 is valid for both')
})

test('HTTP/2: a body the app touched but did not read ends with the stream once the response is out', async (t) => {
  const app = unauthorizedApp()
  app.post('/body-only', (c) => {
    // Only asks for the stream.
    return c.text(c.req.raw.body === null ? 'no body' : 'has a body')
  })
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(server.server.address() as { port: number }).port}`
  const client = connectHttp2(base)
  t.teardown(() => client.close())

  for (const [path, expected] of [['/first-chunk', 'first 5'], ['/body-only', 'has a body'], ['/deny', 'Unauthorized']]) {
    const stream = client.request({ ':method': 'POST', ':path': path })
    stream.write('hello') // and never ends the upload
    let body = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => { body += chunk })
    stream.on('error', () => {})
    const closed = once(stream, 'close').then(() => stream.rstCode)
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('still open after 3 s'), 3000).unref())
    const outcome = await Promise.race([closed, timeout])
    t.equal(body, expected, `${path}: the response`)
    t.equal(outcome, http2Constants.NGHTTP2_NO_ERROR, `${path}: the stream closed, without an error`)
    if (!stream.closed) stream.close()
  }
})
