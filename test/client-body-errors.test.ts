// A body the client got wrong is the client's fault: a mounted app without
// onError answers it as a Fastify route does (400 with Fastify's code,
// logged at info), not as a 500 logged at error level. Each case is compared
// with a plain Fastify route in the same server, over real sockets (fetch,
// raw node:net, node:http2).
import { test } from 'tap'
import { connect } from 'node:net'
import { connect as connectHttp2 } from 'node:http2'
import { Writable } from 'node:stream'
import Fastify, { errorCodes } from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'

const fastifyVersion = Fastify().version

interface LogLine { level: number, reqId?: string, msg: string, req?: { url: string }, res?: { statusCode: number }, err?: { code?: string, statusCode?: number, type?: string } }

async function serve (t: Tap.Test, options: { http2?: boolean } = {}): Promise<{ port: number, base: string, logs: LogLine[] }> {
  const logs: LogLine[] = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line !== '') logs.push(JSON.parse(line))
      callback()
    }
  })
  const server = options.http2 === true
    ? Fastify({ http2: true, logger: { level: 'info', stream } })
    : Fastify({ logger: { level: 'info', stream } })
  // A plain Fastify route reading the body with Fastify's own parsers.
  server.post('/plain', async (request) => request.body)
  const app = new Hono()
  app.post('/json', async (c) => c.json(await c.req.json()))
  app.post('/parse-body', async (c) => c.json(await c.req.parseBody()))
  app.post('/form-data', async (c) => c.json([...(await c.req.formData()).keys()]))
  app.post('/text', async (c) => c.text(await c.req.text()))
  await server.register(fastifyHono, { app, prefix: '/m' })
  const own = new Hono()
  own.onError((err, c) => c.text(`own ${err.name}`, 422))
  own.post('/json', async (c) => c.json(await c.req.json()))
  own.post('/parse-body', async (c) => c.json(await c.req.parseBody()))
  await server.register(fastifyHono, { app: own, prefix: '/own' })
  t.teardown(() => server.close())
  const { port, base } = await listen(server)
  return { port, base, logs }
}

/** The error line Fastify logged for the request to `url`, once it is there. */
async function errorLine (logs: LogLine[], url: string): Promise<LogLine> {
  for (let i = 0; i < 200; i++) {
    const incoming = logs.find((line) => line.req?.url === url)
    const found = incoming === undefined ? undefined : logs.find((line) => line.reqId === incoming.reqId && line.err !== undefined)
    if (found !== undefined) return found
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no error logged for ${url}`)
}

function summary (line: LogLine): unknown {
  return { level: line.level, status: line.res?.statusCode, code: line.err?.code, errStatus: line.err?.statusCode }
}

/** For an abort: the level and statuses (the error's code is whatever the body reader met). */
function abortSummary (line: LogLine): unknown {
  return { level: line.level, status: line.res?.statusCode, errStatus: line.err?.statusCode }
}

async function post (base: string, path: string, type: string, body: string): Promise<{ status: number, body: unknown }> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': type }, body })
  const text = await response.text()
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') === true ? JSON.parse(text) : text }
}

test('c.req.json() on a body that is not JSON, or empty: 400 with Fastify\'s code, as a Fastify route answers, logged at info', async (t) => {
  const { base, logs } = await serve(t)
  for (const [body, code] of [['{bad', 'FST_ERR_CTP_INVALID_JSON_BODY'], ['', 'FST_ERR_CTP_EMPTY_JSON_BODY']]) {
    const plain = await post(base, '/plain', 'application/json', body)
    const mounted = await post(base, '/m/json', 'application/json', body)
    t.equal(plain.status, 400)
    // Fastify 5.0 has no FST_ERR_CTP_INVALID_JSON_BODY: its parser answers with the parse error itself.
    if ((errorCodes as Partial<Record<string, unknown>>)[code] !== undefined) t.match(plain.body, { code })
    else t.notOk((plain.body as { code?: string }).code, `no ${code} on fastify ${fastifyVersion}`)
    t.same(mounted, plain, `${JSON.stringify(body)}: the same answer as the Fastify route`)
  }
  const plainLines = logs.filter((line) => line.err !== undefined && line.res?.statusCode !== undefined)
  const invalidJson = errorCodes.FST_ERR_CTP_INVALID_JSON_BODY === undefined ? undefined : 'FST_ERR_CTP_INVALID_JSON_BODY'
  t.same(plainLines.map(summary), [
    { level: 30, status: 400, code: invalidJson, errStatus: 400 },
    { level: 30, status: 400, code: invalidJson, errStatus: 400 },
    { level: 30, status: 400, code: 'FST_ERR_CTP_EMPTY_JSON_BODY', errStatus: 400 },
    { level: 30, status: 400, code: 'FST_ERR_CTP_EMPTY_JSON_BODY', errStatus: 400 }
  ], 'each logged at info with its 400, for the route and the mount alike')
  t.notOk(logs.some((line) => line.level >= 50), 'nothing at error level')
})

test('a malformed multipart body read with c.req.parseBody() or c.req.formData(): 400 FST_ERR_HONO_INVALID_BODY, logged at info', async (t) => {
  const { base, logs } = await serve(t)
  for (const path of ['/m/parse-body', '/m/form-data']) {
    const answer = await post(base, path, 'multipart/form-data; boundary=xyz', '--xyz\r\nnot a part')
    t.equal(answer.status, 400, path)
    t.match(answer.body, { statusCode: 400, code: 'FST_ERR_HONO_INVALID_BODY', error: 'Bad Request' }, path)
    t.same(summary(await errorLine(logs, path)), { level: 30, status: 400, code: 'FST_ERR_HONO_INVALID_BODY', errStatus: 400 })
  }
  // A well-formed one still parses.
  const form = new FormData()
  form.append('name', 'value')
  const ok = await fetch(`${base}/m/parse-body`, { method: 'POST', body: form })
  t.same([ok.status, await ok.json()], [200, { name: 'value' }])
})

test('an app with its own onError still decides: it gets the parser\'s own error', async (t) => {
  const { base } = await serve(t)
  t.same(await post(base, '/own/json', 'application/json', '{bad'), { status: 422, body: 'own SyntaxError' })
  t.same(await post(base, '/own/parse-body', 'multipart/form-data; boundary=xyz', 'garbage'), { status: 422, body: 'own TypeError' })
})

/** Sends the head and part of a body over a raw socket, then drops the connection. */
async function abortUpload (port: number, path: string, framing: 'content-length' | 'chunked'): Promise<void> {
  const head = framing === 'content-length'
    ? `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":`
    : `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n`
  const socket = connect(port, '127.0.0.1', () => { socket.write(head) })
  socket.on('error', () => {})
  await new Promise((resolve) => setTimeout(resolve, 100))
  socket.destroy()
}

for (const framing of ['content-length', 'chunked'] as const) {
  test(`an upload the client aborts (HTTP/1, ${framing}): logged at info with 400, as for a Fastify route`, async (t) => {
    const { port, logs } = await serve(t)
    await abortUpload(port, '/plain', framing)
    const plain = abortSummary(await errorLine(logs, '/plain'))
    await abortUpload(port, '/m/text', framing)
    const mounted = abortSummary(await errorLine(logs, '/m/text'))
    t.match(plain, { level: 30, status: 400, errStatus: 400 }, 'the Fastify route')
    t.same(mounted, plain, 'the mount logs it the same way')
    t.notOk(logs.some((line) => line.level >= 50), 'nothing at error level')
  })
}

test('an upload the client aborts (HTTP/2): logged at info with 400, as for a Fastify route', async (t) => {
  const { base, logs } = await serve(t, { http2: true })
  for (const path of ['/plain', '/m/text']) {
    const client = connectHttp2(base)
    client.on('error', () => {})
    const stream = client.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', 'content-length': '1000' })
    stream.on('error', () => {})
    stream.write('{"a":')
    await new Promise((resolve) => setTimeout(resolve, 100))
    client.destroy()
  }
  const plain = abortSummary(await errorLine(logs, '/plain'))
  const mounted = abortSummary(await errorLine(logs, '/m/text'))
  t.match(plain, { level: 30, status: 400, errStatus: 400 }, 'the Fastify route')
  t.same(mounted, plain, 'the mount logs it the same way')
  t.notOk(logs.some((line) => line.level >= 50), 'nothing at error level')
})
