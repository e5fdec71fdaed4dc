import { test } from 'tap'
import { once } from 'node:events'
import { connect } from 'node:net'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen, rawRequest, rawExchange, parseResponses, type WireResponse } from './helpers/net'
import { WireConnection } from './helpers/wire-client'

function bodyApp (): Hono {
  const app = new Hono()
  app.post('/json', async (c) => c.json({ got: await c.req.json() }))
  app.post('/text', async (c) => c.text(await c.req.text()))
  app.post('/bytes', async (c) => c.json({ length: (await c.req.arrayBuffer()).byteLength }))
  app.post('/form', async (c) => {
    const form = await c.req.formData()
    const file = form.get('file')
    return c.json({
      name: form.get('name'),
      file: file instanceof File ? { name: file.name, text: await file.text() } : null
    })
  })
  app.post('/parsed', async (c) => c.json(await c.req.parseBody()))
  app.post('/stream', async (c) => {
    const reader = c.req.raw.body!.getReader()
    let chunks = 0
    let bytes = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks++
      bytes += value.byteLength
    }
    return c.json({ chunks: chunks > 0, bytes })
  })
  app.post('/ignore', (c) => c.text('not read'))
  return app
}

test('the app reads the body in every format', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: bodyApp(), prefix: '/b' })
  t.teardown(() => server.close())
  const { base } = await listen(server)

  const json = await fetch(base + '/b/json', { method: 'POST', body: JSON.stringify({ a: [1, 'é'] }), headers: { 'content-type': 'application/json' } })
  t.same(await json.json(), { got: { a: [1, 'é'] } })

  const text = await fetch(base + '/b/text', { method: 'POST', body: 'plain ✓', headers: { 'content-type': 'text/plain' } })
  t.equal(await text.text(), 'plain ✓')

  const bytes = await fetch(base + '/b/bytes', { method: 'POST', body: new Uint8Array(100_000), headers: { 'content-type': 'application/octet-stream' } })
  t.same(await bytes.json(), { length: 100_000 })

  const form = new FormData()
  form.set('name', 'ada')
  form.set('file', new Blob(['file body']), 'notes.txt')
  const multipart = await fetch(base + '/b/form', { method: 'POST', body: form })
  t.same(await multipart.json(), { name: 'ada', file: { name: 'notes.txt', text: 'file body' } })

  const urlencoded = await fetch(base + '/b/form', { method: 'POST', body: new URLSearchParams({ name: 'grace' }) })
  t.same(await urlencoded.json(), { name: 'grace', file: null })

  const parsed = await fetch(base + '/b/parsed', { method: 'POST', body: new URLSearchParams({ a: '1', b: '2' }) })
  t.same(await parsed.json(), { a: '1', b: '2' })

  const stream = await fetch(base + '/b/stream', { method: 'POST', body: 'x'.repeat(70_000), headers: { 'content-type': 'text/plain' } })
  t.same(await stream.json(), { chunks: true, bytes: 70_000 }, 'c.req.raw.body is a readable stream')

  const noType = await rawRequest((server.server.address() as { port: number }).port, 'POST', '/b/text', { body: 'no content type' })
  t.equal(noType.body, 'no content type', 'a body without Content-Type reaches the app too')

  const chunked = await rawRequest((server.server.address() as { port: number }).port, 'POST', '/b/text', {
    headers: { 'transfer-encoding': 'chunked', 'content-type': 'text/plain' },
    body: '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'
  })
  t.equal(chunked.body, 'hello world', 'a chunked upload')
})

test('bodyLimit: oversized bodies answer 413 and never reach the app as complete', async (t) => {
  const seen: string[] = []
  const app = new Hono()
  app.post('/text', async (c) => {
    const body = await c.req.text()
    seen.push(body)
    return c.text('got ' + body.length)
  })
  const server = Fastify({ bodyLimit: 1000 })
  await server.register(fastifyHono, { app, prefix: '/small', bodyLimit: 10 })
  await server.register(fastifyHono, { app, prefix: '/instance' })
  t.teardown(() => server.close())
  const { port, base } = await listen(server)

  const ok = await fetch(base + '/small/text', { method: 'POST', body: '0123456789' })
  t.equal(await ok.text(), 'got 10', 'exactly at the limit')

  const declared = await rawRequest(port, 'POST', '/small/text', { body: '01234567890' })
  t.equal(declared.status, 413, 'a declared Content-Length over the limit')
  t.match(JSON.parse(declared.body), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' })

  const chunked = await rawRequest(port, 'POST', '/small/text', {
    headers: { 'transfer-encoding': 'chunked' },
    body: '8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n'
  })
  t.equal(chunked.status, 413, 'a chunked body that grows past the limit')

  const instance = await rawRequest(port, 'POST', '/instance/text', { headers: { 'transfer-encoding': 'chunked' }, body: `3e9\r\n${'x'.repeat(1001)}\r\n0\r\n\r\n` })
  t.equal(instance.status, 413, "the instance's bodyLimit applies without the option")

  t.same(seen, ['0123456789'], 'the app only ever saw the complete body')
})

test('the body stream: a keep-alive connection survives a body the app did not read', async (t) => {
  const server = Fastify()
  await server.register(fastifyHono, { app: bodyApp(), prefix: '/b' })
  t.teardown(() => server.close())
  const { port } = await listen(server)
  const wire = await rawExchange(port,
    'POST /b/ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' +
    'POST /b/text HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc')
  const [first, second] = parseResponses(wire, ['POST', 'POST'])
  t.equal(first.body, 'not read')
  t.equal(second.body, 'abc', 'the next request on the connection is intact')
})

test('c.req.raw.signal aborts when the client disconnects before the response finished', async (t) => {
  let aborted: (reason: unknown) => void
  const abortedPromise = new Promise((resolve) => { aborted = resolve })
  let started: () => void
  const startedPromise = new Promise<void>((resolve) => { started = resolve })
  const app = new Hono()
  app.post('/slow', async (c) => {
    const signal = c.req.raw.signal
    signal.addEventListener('abort', () => aborted(signal.reason))
    started()
    await new Promise((resolve) => setTimeout(resolve, 2000))
    return c.text('too late')
  })
  app.post('/quick', async (c) => {
    const body = await c.req.text()
    // Fastify's request.signal aborts ~4 ms after a POST body is read (5.12.x): ours must not.
    await new Promise((resolve) => setTimeout(resolve, 50))
    return c.json({ aborted: c.req.raw.signal.aborted, body })
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/s' })
  t.teardown(() => server.close())
  const { port, base } = await listen(server)

  const quick = await fetch(base + '/s/quick', { method: 'POST', body: 'data' })
  t.same(await quick.json(), { aborted: false, body: 'data' }, 'still not aborted after the body was read')

  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('POST /s/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n')
  await startedPromise
  socket.destroy()
  const reason = await abortedPromise
  t.equal((reason as Error).name, 'AbortError', 'aborted with an AbortError')
})

test('c.req.raw.signal first asked for after the client left is already aborted', async (t) => {
  let seen: (state: { aborted: boolean, reason: string | undefined }) => void
  const seenPromise = new Promise<{ aborted: boolean, reason: string | undefined }>((resolve) => { seen = resolve })
  let started: () => void
  const startedPromise = new Promise<void>((resolve) => { started = resolve })
  const app = new Hono<{ Bindings: { outgoing: import('node:http').ServerResponse } }>()
  app.get('/late', async (c) => {
    const closed = once(c.env.outgoing, 'close')
    started()
    await closed
    // The signal is made on first use: it must know the client is gone.
    const signal = c.req.raw.signal
    seen({ aborted: signal.aborted, reason: (signal.reason as Error | undefined)?.name })
    return c.text('nobody there')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/s' })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const connection = await WireConnection.open(port)
  connection.write('GET /s/late HTTP/1.1\r\nHost: x\r\n\r\n')
  await startedPromise
  connection.destroy()
  t.same(await seenPromise, { aborted: true, reason: 'AbortError' })
})

test('a body first read after the client left mid-upload rejects rather than waiting forever', async (t) => {
  const outcomes = new Map<string, (outcome: string) => void>()
  const outcome = (path: string): Promise<string> => new Promise((resolve) => outcomes.set(path, resolve))
  const settle = async (read: Promise<unknown>): Promise<string> => {
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('still pending after 2 s'), 2000) })
    const settled = read.then(() => 'resolved', (err: { code?: string }) => `rejected ${err.code ?? 'without a code'}`)
    try {
      return await Promise.race([settled, waited])
    } finally {
      clearTimeout(timer)
    }
  }
  const app = new Hono<{ Bindings: { outgoing: import('node:http').ServerResponse } }>()
  // Some slow work first (an auth call, say), during which the client goes away.
  app.post('/text', async (c) => {
    await once(c.env.outgoing, 'close')
    outcomes.get('/text')!(await settle(c.req.text()))
    return c.text('nobody there')
  })
  app.post('/stream', async (c) => {
    await once(c.env.outgoing, 'close')
    outcomes.get('/stream')!(await settle(c.req.raw.body!.getReader().read()))
    return c.text('nobody there')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/s' })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  for (const path of ['/text', '/stream']) {
    const result = outcome(path)
    const connection = await WireConnection.open(port)
    // Two of the three bytes announced, then gone.
    connection.write(`POST /s${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nab`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.destroy()
    t.equal(await result, 'rejected ECONNRESET', `${path}: the read fails as an aborted upload`)
  }
})

test('a body that has arrived whole is read at once; one still arriving is read as a stream', async (t) => {
  const app = new Hono<{ Bindings: { incoming: import('node:http').IncomingMessage } }>()
  app.post('/spy', async (c) => {
    // Which events the plugin listens to on Node's stream while the app reads it.
    const incoming = c.env.incoming
    const events: string[] = []
    const on = incoming.on
    incoming.on = function (this: typeof incoming, event: string, listener: (...args: any[]) => void) {
      events.push(event)
      return on.call(this, event, listener)
    } as typeof incoming.on
    // Node parses a body that came with the headers only after the request
    // event: an app reads it whole once anything was awaited (a middleware).
    await new Promise((resolve) => setImmediate(resolve))
    const text = await c.req.text()
    incoming.on = on
    return c.json({ text, streamed: events.includes('data') })
  })
  app.post('/part', async (c) => {
    // Reads the first chunk only, and answers while the rest is still on its way.
    const reader = c.req.raw.body!.getReader()
    const first = await reader.read()
    return c.text('first ' + (first.value?.byteLength ?? 0))
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, bodyLimit: 20 })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const whole = await rawRequest(port, 'POST', '/spy', { body: 'hello, whole' })
  t.same(JSON.parse(whole.body), { text: 'hello, whole', streamed: false }, 'no listeners: the buffered body in one read()')

  const empty = await rawRequest(port, 'POST', '/spy', { headers: { 'content-length': '0' } })
  t.same(JSON.parse(empty.body), { text: '', streamed: false }, 'an empty body')

  const [split] = await exchangeInParts(port, [
    'POST /spy HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\nConnection: close\r\n\r\nhello',
    ', split'
  ], ['POST'])
  t.same(JSON.parse(split.body), { text: 'hello, split', streamed: true }, 'a body still arriving is streamed')

  const overWhole = await rawRequest(port, 'POST', '/spy', { headers: { 'transfer-encoding': 'chunked' }, body: '15\r\n' + 'x'.repeat(21) + '\r\n0\r\n\r\n' })
  t.equal(overWhole.status, 413, 'a whole chunked body over the limit')
  const [overSplit] = await exchangeInParts(port, [
    'POST /spy HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\na\r\n0123456789\r\n',
    'b\r\n0123456789a\r\n0\r\n\r\n'
  ], ['POST'])
  t.equal(overSplit.status, 413, 'a chunked body that grows past the limit while read')

  // The app answered with most of the body unread (more than the streams
  // buffer): the rest is discarded once the response is done, and the next
  // request on the connection is intact.
  const large = Fastify()
  await large.register(fastifyHono, { app })
  t.teardown(() => large.close())
  const [partial, next] = await exchangeInParts((await listen(large)).port, [
    'POST /part HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n01234',
    'x'.repeat(299995) + 'POST /spy HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnext'
  ], ['POST', 'POST'])
  t.equal(partial.body, 'first 5')
  t.same(JSON.parse(next.body), { text: 'next', streamed: false }, 'the next request on the connection is intact')
})

/** Writes the parts 50 ms apart on one connection, then reads a response per method. */
async function exchangeInParts (port: number, parts: string[], methods: string[]): Promise<WireResponse[]> {
  const connection = await WireConnection.open(port)
  for (const part of parts) {
    connection.write(part)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const responses: WireResponse[] = []
  for (const method of methods) {
    const result = await connection.read(method, 5000)
    if (result.kind !== 'response') throw new Error(`no response to ${method}: ${result.kind}`)
    responses.push(result.response)
  }
  connection.destroy()
  return responses
}
