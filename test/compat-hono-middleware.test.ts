// Hono middleware inside a mounted app, and @hono/node-server's helpers:
// the real packages, real sockets. Each test backs one row of
// docs/compatibility.md.
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { gunzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { etag } from 'hono/etag'
import { compress } from 'hono/compress'
import { secureHeaders } from 'hono/secure-headers'
import { logger } from 'hono/logger'
import { basicAuth } from 'hono/basic-auth'
import { bodyLimit } from 'hono/body-limit'
import type { timeout as Timeout } from 'hono/timeout'
import type { requestId as RequestId, RequestIdVariables } from 'hono/request-id'
import { streamSSE } from 'hono/streaming'
import type { proxy as Proxy } from 'hono/proxy'
import { createServer } from 'node:http'
import { serveStatic } from '@hono/node-server/serve-static'
import { getConnInfo } from '@hono/node-server/conninfo'
import fastifyHelmet from '@fastify/helmet'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'
import { lacks, need } from './helpers/optional'
import { fetchWithTimeout as get, listen, pipelined, rawRequest, readEvents, waitFor, type PipelinedResult, type ServerSentEvent, type Teardown } from './helpers/compat'
import { refuses } from './helpers/plugin-loads'

type Env = { Bindings: FastifyHonoBindings }

// The connection after an early answer: the tests below send a large body the
// app does not read to the end, then a second request on the same connection.
// Either the second request is answered, or the first answer said
// `Connection: close` and the server closed the connection, as Fastify does
// after its own body parser errors.
const largeBody = Buffer.alloc(600 * 1024, 0x61)
const connectionUsable = (t: Test, r: PipelinedResult, what: string): void => {
  t.ok(r.statuses.length === 2 || (r.firstSaidClose && r.closed), `${what}: statuses ${JSON.stringify(r.statuses)}, Connection: close ${r.firstSaidClose}, closed ${r.closed}`)
}

async function serve (t: Teardown, app: Hono<any>, options: { prefix?: string, bodyLimit?: number, trustProxy?: boolean } = {}): Promise<string> {
  const server = Fastify({ trustProxy: options.trustProxy ?? false })
  await server.register(fastifyHono, { app, prefix: options.prefix ?? '/h', bodyLimit: options.bodyLimit })
  return await listen(t, server)
}

t.test('cors: preflights and CORS headers come from the app', async (t) => {
  const app = new Hono<Env>()
  app.use('/api/*', cors({ origin: 'http://allowed.test', allowMethods: ['GET', 'PUT'], maxAge: 600 }))
  app.put('/api/things', (c) => c.json({ put: true }))
  const base = await serve(t, app)

  let res = await get(`${base}/h/api/things`, { method: 'OPTIONS', headers: { origin: 'http://allowed.test', 'access-control-request-method': 'PUT' } })
  t.equal(res.status, 204)
  t.equal(res.headers.get('access-control-allow-origin'), 'http://allowed.test')
  t.equal(res.headers.get('access-control-allow-methods'), 'GET,PUT')
  t.equal(res.headers.get('access-control-max-age'), '600')
  t.equal(res.headers.get('vary'), 'Origin')
  t.equal(await res.text(), '')

  res = await get(`${base}/h/api/things`, { method: 'PUT', headers: { origin: 'http://allowed.test' } })
  t.equal(res.status, 200)
  t.equal(res.headers.get('access-control-allow-origin'), 'http://allowed.test')
  t.same(await res.json(), { put: true })
})

t.test('etag: ETag on 200, 304 without a body for a matching If-None-Match', async (t) => {
  const app = new Hono<Env>()
  app.use('*', etag())
  app.get('/doc', (c) => c.text('a cacheable document'))
  const base = await serve(t, app)

  let res = await rawRequest(`${base}/h/doc`)
  t.equal(res.status, 200)
  const tag = res.headers.etag
  t.match(tag, /^"[0-9a-f]+"$/)
  t.equal(res.headers['content-length'], '20')
  t.equal(res.body.toString(), 'a cacheable document')

  res = await rawRequest(`${base}/h/doc`, { headers: { 'if-none-match': tag as string } })
  t.equal(res.status, 304)
  t.equal(res.headers.etag, tag)
  t.equal(res.headers['content-length'], undefined)
  t.equal(res.headers['content-type'], undefined, 'etag() strips the entity headers from the 304')
  t.equal(res.body.length, 0)

  res = await rawRequest(`${base}/h/doc`, { headers: { 'if-none-match': '"other"' } })
  t.equal(res.status, 200)
  t.equal(res.body.toString(), 'a cacheable document')
})

t.test('compress: gzip from the app, streamed; identity when not accepted', async (t) => {
  const text = 'compressible text '.repeat(300)
  const app = new Hono<Env>()
  app.use('*', compress())
  app.get('/text', (c) => c.text(text))
  const base = await serve(t, app)

  let res = await rawRequest(`${base}/h/text`, { headers: { 'accept-encoding': 'gzip' } })
  t.equal(res.status, 200)
  t.equal(res.headers['content-encoding'], 'gzip')
  // Vary as Hono's compress sets it (older versions set none).
  const own = await app.request('/text', { headers: { 'accept-encoding': 'gzip' } })
  await own.arrayBuffer()
  t.equal(res.headers.vary, own.headers.get('vary') ?? undefined, 'Vary as from the app alone')
  t.equal(res.headers['transfer-encoding'], 'chunked', 'a CompressionStream body goes out chunked, without a length')
  t.equal(gunzipSync(res.body).toString(), text)

  res = await rawRequest(`${base}/h/text`)
  t.equal(res.headers['content-encoding'], undefined)
  t.equal(res.headers['content-length'], String(text.length))
  t.equal(res.body.toString(), text)
})

t.test('secureHeaders: its headers from the app; beside @fastify/helmet, the app\'s value wins each header both set', async (t) => {
  const app = new Hono<Env>()
  app.use('*', secureHeaders())
  app.get('/page', (c) => c.text('page'))

  await t.test('alone', async (t) => {
    const base = await serve(t, app)
    const res = await get(`${base}/h/page`)
    t.equal(res.status, 200)
    t.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN')
    t.equal(res.headers.get('x-content-type-options'), 'nosniff')
    t.equal(res.headers.get('strict-transport-security'), 'max-age=15552000; includeSubDomains')
    t.equal(res.headers.get('content-security-policy'), null, 'secureHeaders sets no CSP by default')
    t.equal(await res.text(), 'page')
  })

  await t.test('with @fastify/helmet', { skip: refuses('@fastify/helmet') }, async (t) => {
    const server = Fastify()
    await server.register(fastifyHelmet)
    await server.register(fastifyHono, { app, prefix: '/h' })
    const base = await listen(t, server)
    const res = await get(`${base}/h/page`)
    t.equal(res.headers.get('strict-transport-security'), 'max-age=15552000; includeSubDomains', 'Hono\'s value, not helmet\'s max-age=31536000')
    t.match(res.headers.get('content-security-policy'), /^default-src 'self';/, 'helmet\'s CSP stays where the app set none')
    t.equal(await res.text(), 'page')
  })
})

t.test('logger: prints one line in, one line out, with the path as the app sees it (prefix stripped)', async (t) => {
  const lines: string[] = []
  const app = new Hono<Env>()
  app.use('*', logger((line: string) => { lines.push(stripVTControlCharacters(line)) }))
  app.get('/things/:id', (c) => c.text(c.req.param('id')))
  const base = await serve(t, app, { prefix: '/api/v2' })

  const res = await get(`${base}/api/v2/things/7?x=1`)
  t.equal(res.status, 200)
  t.equal(await res.text(), '7')
  t.equal(lines.length, 2)
  t.match(lines[0], /<-- GET \/things\/7/)
  t.match(lines[1], /--> GET \/things\/7.* 200 \d+ms$/)
  // The same lines as the app alone prints for the path it sees (the format,
  // with or without the query, is the installed logger's).
  const mounted = lines.splice(0).map((line) => line.replace(/\d+ms$/, 'Nms'))
  await (await app.request('/things/7?x=1')).text()
  t.same(mounted, lines.map((line) => line.replace(/\d+ms$/, 'Nms')), 'as from the app alone')
})

t.test('basicAuth: 401 with a challenge, 200 with the credentials', async (t) => {
  let reached = 0
  const app = new Hono<Env>()
  app.use('/admin/*', basicAuth({ username: 'admin', password: 's3cret' }))
  app.get('/admin/panel', (c) => { reached++; return c.text('panel') })
  app.post('/admin/upload', async (c) => c.text(`got ${(await c.req.arrayBuffer()).byteLength}`))
  app.get('/next', (c) => c.text('next'))
  const base = await serve(t, app)

  let res = await get(`${base}/h/admin/panel`)
  t.equal(res.status, 401)
  t.equal(res.headers.get('www-authenticate'), 'Basic realm="Secure Area"')
  await res.arrayBuffer()
  res = await get(`${base}/h/admin/panel`, { headers: { authorization: 'Basic ' + Buffer.from('admin:wrong').toString('base64') } })
  t.equal(res.status, 401)
  await res.arrayBuffer()
  t.equal(reached, 0)
  res = await get(`${base}/h/admin/panel`, { headers: { authorization: 'Basic ' + Buffer.from('admin:s3cret').toString('base64') } })
  t.equal(res.status, 200)
  t.equal(await res.text(), 'panel')

  // An upload refused for its credentials: the body is never read.
  const small = await pipelined(base, { method: 'POST', path: '/h/admin/upload', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(20 * 1024) }, '/h/next')
  t.same(small.statuses, [401, 200], 'a 20 KiB upload without credentials: 401, and the next request is answered')
  const large = await pipelined(base, { method: 'POST', path: '/h/admin/upload', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(600 * 1024) }, '/h/next')
  t.same(large.statuses.slice(0, 1), [401], 'a 600 KiB upload without credentials: 401')
  connectionUsable(t, large, 'then the connection')
})

t.test('bodyLimit: the app\'s limit below the mount\'s; above the mount\'s bodyLimit Fastify answers first', async (t) => {
  const app = new Hono<Env>()
  app.post('/upload', bodyLimit({ maxSize: 10, onError: (c) => c.text('hono: too big', 413) }), async (c) => c.text(`got ${(await c.req.text()).length}`))
  const base = await serve(t, app, { bodyLimit: 100 })

  let res = await rawRequest(`${base}/h/upload`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'small' })
  t.equal(res.status, 200)
  t.equal(res.body.toString(), 'got 5')

  res = await rawRequest(`${base}/h/upload`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(50) })
  t.equal(res.status, 413)
  t.equal(res.body.toString(), 'hono: too big', 'declared length over the app\'s limit')

  res = await rawRequest(`${base}/h/upload`, { method: 'POST', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: 'x'.repeat(50) })
  t.equal(res.status, 413)
  t.equal(res.body.toString(), 'hono: too big', 'chunked, counted while read')

  res = await rawRequest(`${base}/h/upload`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(500) })
  t.equal(res.status, 413)
  t.match(JSON.parse(res.body.toString()), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }, 'over the mount\'s bodyLimit: Fastify\'s 413')
  t.equal(res.headers.connection, 'close', 'declared over the mount\'s limit: refused before reading, connection closed')

  res = await rawRequest(`${base}/h/upload`, { method: 'POST', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: 'x'.repeat(500) })
  t.equal(res.status, 413, 'chunked over the mount\'s limit: Fastify\'s 413 too')
  t.match(JSON.parse(res.body.toString()), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' })
})

t.test('bodyLimit: the connection after the app\'s 413', async (t) => {
  const app = new Hono<Env>()
  app.post('/upload', bodyLimit({ maxSize: 10 }), async (c) => c.text(`got ${(await c.req.text()).length}`))
  app.get('/next', (c) => c.text('next'))
  const base = await serve(t, app)

  const small = await pipelined(base, { method: 'POST', path: '/h/upload', headers: { 'content-type': 'text/plain' }, body: Buffer.alloc(20 * 1024, 0x61) }, '/h/next')
  t.same(small.statuses, [413, 200], 'a 20 KiB body the app refused: the next request on the connection is answered')

  const large = await pipelined(base, { method: 'POST', path: '/h/upload', headers: { 'content-type': 'text/plain' }, body: largeBody }, '/h/next')
  t.same(large.statuses.slice(0, 1), [413], 'a 600 KiB body the app refused unread: 413')
  connectionUsable(t, large, 'then the connection')
})

t.test('bodyLimit: the connection after the mount\'s 413 for a chunked body', async (t) => {
  const app = new Hono<Env>()
  app.post('/upload', async (c) => c.text(`got ${(await c.req.text()).length}`))
  app.get('/next', (c) => c.text('next'))
  const base = await serve(t, app, { bodyLimit: 1000 })

  const declared = await pipelined(base, { method: 'POST', path: '/h/upload', headers: { 'content-type': 'text/plain' }, body: largeBody }, '/h/next')
  t.same(declared.statuses, [413], 'declared length over the limit: 413 and nothing more')
  t.ok(declared.firstSaidClose && declared.closed, 'Connection: close, and the server closed it')

  const chunked = await pipelined(base, { method: 'POST', path: '/h/upload', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: largeBody }, '/h/next')
  t.same(chunked.statuses, [413], 'chunked over the limit: 413 and nothing more')
  t.ok(chunked.firstSaidClose && chunked.closed, 'Connection: close, and the server closed it, as after Fastify\'s own parsers')
})

t.test('timeout: 504 when the handler is slower than the limit', { skip: lacks('hono/timeout') }, async (t) => {
  const { timeout } = need<{ timeout: typeof Timeout }>('hono/timeout')
  let finished = false
  const app = new Hono<Env>()
  app.get('/slow', timeout(50), async (c) => {
    await new Promise((resolve) => setTimeout(resolve, 400))
    finished = true
    return c.text('late')
  })
  app.get('/fast', timeout(1000), (c) => c.text('fast'))
  const base = await serve(t, app)

  const started = Date.now()
  let res = await get(`${base}/h/slow`)
  const elapsed = Date.now() - started
  t.equal(res.status, 504)
  t.equal(await res.text(), 'Gateway Timeout')
  t.ok(elapsed < 350, `answered after ${elapsed} ms, before the handler finished`)
  t.notOk(finished, 'the handler was still running when the 504 went out')
  await waitFor(() => finished, 'the slow handler to finish')
  t.pass('the handler is not cancelled: it runs to its end')

  res = await get(`${base}/h/fast`)
  t.equal(res.status, 200)
  t.equal(await res.text(), 'fast')
})

t.test('requestId: its own id by default; Fastify\'s id with a generator', { skip: lacks('hono/request-id') }, async (t) => {
  const { requestId } = need<{ requestId: typeof RequestId }>('hono/request-id')
  const app = new Hono<Env & { Variables: RequestIdVariables }>()
  app.get('/own', requestId(), (c) => c.text(c.get('requestId')))
  app.get('/fastify', requestId({ generator: (c) => c.env.request.id }), (c) => c.json({ hono: c.get('requestId'), fastify: c.env.request.id }))
  const base = await serve(t, app)

  let res = await get(`${base}/h/own`)
  t.equal(res.status, 200)
  const own = await res.text()
  t.match(own, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random UUID')
  t.equal(res.headers.get('x-request-id'), own)

  res = await get(`${base}/h/own`, { headers: { 'x-request-id': 'from-client-1' } })
  t.equal(await res.text(), 'from-client-1', 'a valid incoming X-Request-Id is kept')

  res = await get(`${base}/h/fastify`)
  const ids = await res.json() as { hono: string, fastify: string }
  t.match(ids.fastify, /^req-/)
  t.equal(ids.hono, ids.fastify, 'the same id as in Fastify\'s log lines')
  t.equal(res.headers.get('x-request-id'), ids.fastify)
})

t.test('streamSSE: events go out as they are written', async (t) => {
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  const app = new Hono<Env>()
  app.get('/events', (c) => streamSSE(c, async (stream) => {
    await stream.writeSSE({ event: 'greeting', id: '1', data: 'hello' })
    // Only after the client has read the first event.
    await released
    await stream.writeSSE({ id: '2', data: 'line one\nline two' })
  }))
  const base = await serve(t, app)

  const res = await get(`${base}/h/events`)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'text/event-stream')
  t.equal(res.headers.get('transfer-encoding'), 'chunked')
  const events: ServerSentEvent[] = []
  const { ended } = await readEvents(res.body!, (event) => {
    events.push(event)
    if (event.id === '1') release()
  })
  t.ok(ended)
  t.same(events.map((e) => [e.event, e.id, e.data]), [['greeting', '1', 'hello'], [undefined, '2', 'line one\nline two']])
})

t.test('serveStatic (@hono/node-server): files under the mount, HEAD and ranges; nothing outside root', async (t) => {
  const dir = t.testdir({
    public: { 'hello.txt': 'hello static\n', 'index.html': '<h1>index</h1>', sub: { 'data.json': '{"ok":true}' } },
    'secret.txt': 'do not serve'
  })
  const app = new Hono<Env>()
  // The app sees paths below the mount, so no rewriteRequestPath is needed.
  app.use('/*', serveStatic({ root: join(dir, 'public') }))
  app.notFound((c) => c.text('no such file', 404))
  const base = await serve(t, app, { prefix: '/files' })

  // The headers serveStatic sets are the installed version's (@hono/node-server
  // 1.x: a charset on JSON, no Last-Modified): compared with the app alone.
  const own = async (path: string): Promise<Headers> => { const r = await app.request(path); await r.arrayBuffer(); return r.headers }
  let res = await rawRequest(`${base}/files/hello.txt`)
  t.equal(res.status, 200)
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(res.headers['content-length'], '13')
  t.equal(res.headers['last-modified'], (await own('/hello.txt')).get('last-modified') ?? undefined)
  t.equal(res.body.toString(), 'hello static\n')

  res = await rawRequest(`${base}/files/sub/data.json`)
  t.equal(res.headers['content-type'], (await own('/sub/data.json')).get('content-type'))
  t.match(res.headers['content-type'], /^application\/json/)
  t.equal(res.body.toString(), '{"ok":true}')

  res = await rawRequest(`${base}/files/`)
  t.equal(res.status, 200, 'a directory serves its index.html')
  t.equal(res.body.toString(), '<h1>index</h1>')

  res = await rawRequest(`${base}/files/hello.txt`, { method: 'HEAD' })
  t.equal(res.status, 200)
  t.equal(res.headers['content-length'], '13')
  t.equal(res.body.length, 0)

  res = await rawRequest(`${base}/files/hello.txt`, { headers: { range: 'bytes=6-11' } })
  t.equal(res.status, 206)
  t.equal(res.headers['content-range'], 'bytes 6-11/13')
  t.equal(res.headers['content-length'], '6')
  t.equal(res.body.toString(), 'static')

  for (const path of ['/files/nope.txt', '/files/..%2fsecret.txt', '/files/sub/..%5c..%5csecret.txt']) {
    res = await rawRequest(base + path)
    t.equal(res.status, 404, `${path}: 404`)
    t.equal(res.body.toString(), 'no such file')
  }
  // A dot segment never reaches the app: the path Fastify routed is not the one a URL would resolve it to.
  for (const path of ['/files/../secret.txt', '/files/%2e%2e/secret.txt']) {
    res = await rawRequest(base + path)
    t.equal(res.status, 400, `${path}: 400`)
    t.notMatch(res.body.toString(), /do not serve/)
  }
})

t.test('getConnInfo (@hono/node-server): the socket\'s peer, read from c.env.incoming; not the forwarded client', async (t) => {
  const app = new Hono<Env>()
  app.get('/conn', (c) => c.json({ conn: getConnInfo(c), fastifyIp: c.env.request.ip }))
  const base = await serve(t, app, { trustProxy: true })

  const res = await get(`${base}/h/conn`, { headers: { 'x-forwarded-for': '203.0.113.7' } })
  t.equal(res.status, 200)
  const body = await res.json() as { conn: { remote: { address: string, port: number, addressType: string } }, fastifyIp: string }
  t.equal(body.conn.remote.address, '127.0.0.1')
  t.equal(body.conn.remote.addressType, 'IPv4')
  t.type(body.conn.remote.port, 'number')
  t.equal(body.fastifyIp, '203.0.113.7', 'with trustProxy, the forwarded client is request.ip')
})

t.test('hono/proxy and fetch(): forwarding the request, its headers and its body, upstream', async (t) => {
  // An upstream that echoes what it received.
  const upstream = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => { body += chunk.toString() })
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.setHeader('x-upstream', 'yes')
      res.end(JSON.stringify({ method: req.method, url: req.url, test: req.headers['x-test'] ?? null, body }))
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { upstream.close() })
  const { port } = upstream.address() as { port: number }
  const origin = `http://127.0.0.1:${port}`

  const app = new Hono()
  // The request's lightweight Headers and its body as init of a native fetch.
  app.all('/fetch/*', (c) => fetch(`${origin}/fetch`, { method: c.req.method, headers: c.req.raw.headers, body: c.req.raw.body, duplex: 'half' } as RequestInit))
  // The request itself as the init of a new Request.
  app.all('/request/*', (c) => fetch(new Request(`${origin}/request`, c.req.raw)))
  const noProxy = lacks('hono/proxy')
  if (noProxy === false) {
    const { proxy } = need<{ proxy: typeof Proxy }>('hono/proxy')
    app.all('/proxy/*', (c) => proxy(`${origin}/proxy`, c.req))
  }
  const base = await serve(t, app)

  for (const route of ['fetch', 'request', 'proxy']) {
    await t.test(route, { skip: route === 'proxy' ? noProxy : false }, async (t) => {
      for (const method of ['GET', 'POST']) {
        const res = await get(`${base}/h/${route}/x`, { method, headers: { 'x-test': 'forwarded', 'content-type': 'text/plain' }, body: method === 'POST' ? 'hello upstream' : undefined })
        t.equal(res.status, 200, `${route} ${method}: 200`)
        t.equal(res.headers.get('x-upstream'), 'yes', `${route} ${method}: the upstream's headers`)
        t.same(await res.json(), { method, url: `/${route}`, test: 'forwarded', body: method === 'POST' ? 'hello upstream' : '' }, `${route} ${method}: what the upstream received`)
      }
    })
  }
})
