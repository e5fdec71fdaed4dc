// The request body in its less common states, as @hono/node-server (2.1.9)
// presents them: a body that arrived whole before the client left, an empty
// body, a body someone read through c.env.incoming first. Each scenario runs
// with the native Request (overrideGlobalObjects: false, first, before
// anything installs the lightweight classes) and with the lightweight one.
import { test, type Test } from 'tap'
import { once } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { connect as connectHttp2 } from 'node:http2'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'
import { WireConnection } from './helpers/wire-client'

type Bindings = { Bindings: { incoming: IncomingMessage, outgoing: ServerResponse } }
type Options = { overrideGlobalObjects: boolean }

/** What a read gave: the value as a string, or the error's name and code. */
async function outcome (read: () => Promise<unknown>): Promise<string> {
  try {
    const value = await read()
    return 'ok ' + (typeof value === 'string' ? value : JSON.stringify(value))
  } catch (err) {
    const { name, code } = err as { name: string, code?: string }
    return `${name}${code === undefined ? '' : ' ' + code}`
  }
}

async function bodyArrivedWholeThenClientLeft (t: Test, options: Options): Promise<void> {
  const results = new Map<string, (result: string) => void>()
  const result = (how: string): Promise<string> => new Promise((resolve) => results.set(how, resolve))
  const reads: Record<string, (c: import('hono').Context<Bindings>) => Promise<unknown>> = {
    text: (c) => c.req.text(),
    json: (c) => c.req.json(),
    arrayBuffer: (c) => c.req.arrayBuffer().then((buffer) => Buffer.from(buffer).toString()),
    parseBody: (c) => c.req.parseBody(),
    formData: (c) => c.req.formData().then((form) => Object.fromEntries(form)),
    blob: (c) => c.req.blob().then((blob) => blob.text()),
    stream: (c) => new Response(c.req.raw.body).text()
  }
  const app = new Hono<Bindings>()
  app.post('/:how', async (c) => {
    // Slow work first, during which the client goes away.
    await once(c.env.outgoing, 'close')
    const how = c.req.param('how')
    results.get(how)!(await outcome(() => reads[how](c)))
    return c.text('nobody there')
  })
  // Read in part while it arrives; the rest arrives, the client leaves, the app reads on.
  let firstRead!: () => void
  app.post('/parts/in', async (c) => {
    const reader = c.req.raw.body!.getReader()
    let text = new TextDecoder().decode((await reader.read()).value)
    firstRead()
    await once(c.env.outgoing, 'close')
    const rest = await outcome(async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return text
        text += new TextDecoder().decode(value)
      }
    })
    results.get('in-parts')!(rest)
    return c.text('nobody there')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, ...options })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  for (const how of Object.keys(reads)) {
    const [type, body, expected] = how === 'json'
      ? ['application/json', '{"a":"1","b":"2"}', 'ok {"a":"1","b":"2"}']
      : ['application/x-www-form-urlencoded', 'a=1&b=2', how === 'parseBody' || how === 'formData' ? 'ok {"a":"1","b":"2"}' : 'ok a=1&b=2']
    const read = result(how)
    const connection = await WireConnection.open(port)
    connection.write(`POST /${how} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.destroy()
    t.equal(await read, expected, `${how}: the whole body, though the client has gone`)
  }

  const read = result('in-parts')
  const started = new Promise<void>((resolve) => { firstRead = resolve })
  const connection = await WireConnection.open(port)
  connection.write('POST /parts/in HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\na=1&')
  await started
  // Two more parts: one fills the stream's queue, the other stays in Node's buffer.
  connection.write('b=2&')
  await new Promise((resolve) => setTimeout(resolve, 50))
  connection.write('c=3')
  await new Promise((resolve) => setTimeout(resolve, 50))
  connection.destroy()
  t.equal(await read, 'ok a=1&b=2&c=3', 'a stream read in part: the rest once the client has gone')
}

async function emptyBodies (t: Test, options: Options, withTrace = true): Promise<void> {
  const seen: string[] = []
  const app = new Hono()
  app.all('/', async (c) => {
    const body = c.req.raw.body
    seen.push(`${c.req.method} ${body === null ? 'null' : 'stream ' + JSON.stringify(await new Response(body).text())}`)
    return c.text('ok')
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, ...options })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  const requests: Array<[string, string]> = [
    ['GET', ''],
    ['HEAD', ''],
    ...(withTrace ? [['TRACE', '']] as Array<[string, string]> : []),
    ['POST', ''],
    ['POST', 'Content-Length: 0\r\n'],
    ['POST', 'Content-Type: text/plain\r\nContent-Length: 0\r\n'],
    ['PUT', ''],
    ['PATCH', 'Content-Length: 0\r\n'],
    ['DELETE', ''],
    ['OPTIONS', '']
  ]
  const connection = await WireConnection.open(port)
  for (const [method, headers] of requests) {
    connection.write(`${method} / HTTP/1.1\r\nHost: x\r\n${headers}\r\n`)
    const answer = await connection.read(method, 5000)
    t.equal(answer.kind, 'response', `${method} ${JSON.stringify(headers)}: answered`)
  }
  connection.destroy()
  t.same(seen, [
    'GET null',
    'HEAD null',
    ...(withTrace ? ['TRACE null'] : []),
    'POST stream ""',
    'POST stream ""',
    'POST stream ""',
    'PUT stream ""',
    'PATCH stream ""',
    'DELETE stream ""',
    'OPTIONS stream ""'
  ], 'GET, HEAD and TRACE have no body; every other method an empty one')
}

async function readThroughIncomingFirst (t: Test, options: Options): Promise<void> {
  const app = new Hono<Bindings>()
  const reads: Record<string, (c: import('hono').Context<Bindings>) => Promise<unknown>> = {
    text: (c) => c.req.text(),
    json: (c) => c.req.json(),
    arrayBuffer: (c) => c.req.arrayBuffer(),
    stream: (c) => new Response(c.req.raw.body).text()
  }
  app.post('/:how', async (c) => {
    const chunks: Buffer[] = []
    for await (const chunk of c.env.incoming) chunks.push(chunk as Buffer)
    const result = await outcome(() => reads[c.req.param('how')](c))
    return c.json({ incoming: Buffer.concat(chunks).toString(), result })
  })
  const server = Fastify()
  await server.register(fastifyHono, { app, ...options })
  t.teardown(() => server.close())
  const { port } = await listen(server)

  for (const how of Object.keys(reads)) {
    const connection = await WireConnection.open(port)
    connection.write(`POST /${how} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n"hello"`)
    const answer = await connection.read('POST', 5000)
    connection.destroy()
    t.same(answer.kind === 'response' && JSON.parse(answer.response.body), { incoming: '"hello"', result: 'TypeError' }, `${how}: the body is used`)
  }
}

test('native Request: a body that arrived whole, empty bodies, a body read through c.env.incoming', async (t) => {
  const options = { overrideGlobalObjects: false }
  await t.test('arrived whole before the client left', (t) => bodyArrivedWholeThenClientLeft(t, options))
  // A native Request cannot have the method TRACE: such a request answers 400.
  await t.test('empty bodies', (t) => emptyBodies(t, options, false))
  await t.test('read through c.env.incoming first', (t) => readThroughIncomingFirst(t, options))
  t.equal(globalThis.Request.name, 'Request', 'still the native classes')
})

test('a body that arrived whole before the client left is still read whole, every way', (t) => bodyArrivedWholeThenClientLeft(t, { overrideGlobalObjects: true }))

test('GET, HEAD and TRACE have a null body; every other method an empty stream, as on @hono/node-server', (t) => emptyBodies(t, { overrideGlobalObjects: true }))

test('a body read through c.env.incoming first is used: reading it again is a TypeError', (t) => readThroughIncomingFirst(t, { overrideGlobalObjects: true }))

test('HTTP/2: a POST whose headers end the stream has an empty body, a GET none', async (t) => {
  const seen: string[] = []
  const app = new Hono()
  app.all('/', async (c) => {
    const body = c.req.raw.body
    seen.push(`${c.req.method} ${body === null ? 'null' : 'stream ' + JSON.stringify(await new Response(body).text())}`)
    return c.text('ok')
  })
  const server = Fastify({ http2: true })
  await server.register(fastifyHono, { app })
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const client = connectHttp2(`http://127.0.0.1:${(server.server.address() as { port: number }).port}`)
  t.teardown(() => client.close())
  for (const method of ['GET', 'POST', 'DELETE']) {
    const stream = client.request({ ':method': method, ':path': '/' }, { endStream: true })
    stream.resume()
    await once(stream, 'end')
  }
  t.same(seen, ['GET null', 'POST stream ""', 'DELETE stream ""'])
})
