import { inspect } from 'node:util'
// WebSockets in a mounted Hono app (fastify-hono/ws), over real sockets with
// a `ws` client: the upgrade through Fastify's routing and hooks, the whole
// event API, refusals, coexistence with @fastify/websocket, shutdown, limits.
import { test } from 'tap'
import { once } from 'node:events'
import { connect } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyWebsocket from '@fastify/websocket'
import { Hono } from 'hono'
import { upgradeWebSocket as nodeServerUpgradeWebSocket } from '@hono/node-server'
import fastifyHono, { type FastifyHonoBindings } from 'fastify-hono'
import { upgradeWebSocket } from 'fastify-hono/ws'
import WebSocket from 'ws'
import { logCollector } from './helpers/compat'
import { refuses } from './helpers/plugin-loads'

// ws before 8.2 names WebSocketServer only in its ES module wrapper; from
// CommonJS, as here, it is WebSocket.Server (in every 8.x).
const WebSocketServer = WebSocket.Server

const unhandled: unknown[] = []
process.on('unhandledRejection', (reason) => { unhandled.push(reason) })
process.on('uncaughtException', (err) => { unhandled.push(err) })

type Env = { Bindings: FastifyHonoBindings }

interface Seen { closes: Array<{ code: number, reason: string }>, opens: number, errors: unknown[] }

function echoApp (seen: Seen = { closes: [], opens: 0, errors: [] }): Hono<Env> {
  const app = new Hono<Env>()
  app.get('/echo', upgradeWebSocket((c) => {
    c.header('x-from-app', 'yes')
    return {
      onOpen (_event, ws) { seen.opens++; ws.send(JSON.stringify({ open: true, protocol: ws.protocol, path: new URL(c.req.url).pathname })) },
      onMessage (event, ws) {
        if (event.data === 'close me') ws.close(4002, 'server bye')
        else ws.send(event.data as string | ArrayBuffer)
      },
      onClose (event) { seen.closes.push({ code: event.code, reason: event.reason }) },
      onError (event) { seen.errors.push(event) }
    }
  }))
  app.get('/env', upgradeWebSocket((c) => ({
    onOpen (_event, ws) {
      ws.send(JSON.stringify({
        outgoing: c.env.outgoing === undefined,
        request: typeof c.env.request.id,
        reply: typeof c.env.reply.hijack,
        fastify: typeof c.env.fastify.close,
        incoming: c.env.incoming.headers.upgrade
      }))
    }
  })))
  app.get('/refuse', (c) => c.text('not for you', 403, { 'x-why': 'policy' }))
  return app
}

async function start (t: { teardown: (fn: () => unknown) => void }, server: FastifyInstance): Promise<string> {
  await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => server.close())
  const address = server.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return `ws://127.0.0.1:${address.port}`
}

/** Opens a client and resolves with it and its first message, or rejects with the HTTP status it was refused with. */
function open (url: string, protocols?: string[], options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<{ ws: WebSocket, first: string, headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, options)
    let headers: Record<string, string | string[] | undefined> = {}
    ws.once('upgrade', (res) => { headers = res.headers })
    ws.once('message', (data) => resolve({ ws, first: data.toString(), headers }))
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => reject(Object.assign(new Error('refused ' + res.statusCode), { status: res.statusCode, headers: res.headers, body })))
      res.on('error', () => reject(Object.assign(new Error('refused ' + res.statusCode), { status: res.statusCode, headers: res.headers, body })))
    })
    ws.once('error', reject)
  })
}

function nextMessage (ws: WebSocket): Promise<{ data: Buffer, isBinary: boolean }> {
  return new Promise((resolve) => { ws.once('message', (data: Buffer, isBinary) => resolve({ data, isBinary })) })
}

function closed (ws: WebSocket): Promise<{ code: number, reason: string }> {
  return new Promise((resolve) => { ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })) })
}

test('echo: text, binary and a 1 MiB message; the bindings, the headers and the request log', async (t) => {
  const logs = logCollector()
  const server = Fastify({ logger: { level: 'info', stream: logs.stream } })
  server.addHook('onRequest', async (_request, reply) => { reply.header('x-from-hook', 'hook') })
  await server.register(fastifyHono, { app: echoApp(), prefix: '/api', websocket: { server: new WebSocketServer({ noServer: true }) } })
  const base = await start(t, server)

  const { ws, first, headers } = await open(`${base}/api/echo`)
  t.same(JSON.parse(first), { open: true, protocol: null, path: '/echo' })
  t.equal(headers['x-from-app'], 'yes', 'a header the app set is on the 101')
  t.equal(headers['x-from-hook'], 'hook', 'a header an onRequest hook set is on the 101')

  ws.send('hello')
  let got = await nextMessage(ws)
  t.same([got.data.toString(), got.isBinary], ['hello', false])
  ws.send(Buffer.from([0, 1, 2, 255]))
  got = await nextMessage(ws)
  t.same([[...got.data], got.isBinary], [[0, 1, 2, 255], true])
  const big = Buffer.alloc(1024 * 1024, 7)
  ws.send(big)
  got = await nextMessage(ws)
  t.ok(got.isBinary && got.data.equals(big), 'a 1 MiB message echoes whole')
  ws.close()
  await closed(ws)

  const env = await open(`${base}/api/env`)
  t.same(JSON.parse(env.first), { outgoing: true, request: 'string', reply: 'function', fastify: 'function', incoming: 'websocket' })
  env.ws.close()
  await closed(env.ws)
  t.ok(logs.lines.some((line) => line.msg === 'incoming request' && (line.req as { url: string }).url === '/api/echo'), 'the request log has the upgrade')
  t.same(unhandled, [])
})

test('message data: text as a string, binary as an ArrayBuffer holding that message alone', async (t) => {
  const app = new Hono<Env>()
  app.get('/data', upgradeWebSocket(() => ({
    onMessage (event, ws) {
      const data = event.data
      ws.send(JSON.stringify(data instanceof ArrayBuffer
        ? { arrayBuffer: true, byteLength: data.byteLength, bytes: [...new Uint8Array(data)] }
        : { type: typeof data, text: data }))
    }
  })))
  const server = Fastify()
  await server.register(fastifyHono, { app, websocket: { server: new WebSocketServer({ noServer: true }) } })
  const base = await start(t, server)
  const ws = new WebSocket(`${base}/data`)
  await once(ws, 'open')
  const replies: unknown[] = []
  ws.on('message', (data: Buffer) => { replies.push(JSON.parse(data.toString())) })
  // Sent back to back, so that the server reads them together and each
  // binary message is a view into the middle of what the socket read.
  ws.send('héllo')
  ws.send(Buffer.from([1, 2, 3]))
  ws.send(Buffer.from([]))
  ws.send(Buffer.from([255, 0, 7, 9, 11]))
  await waitUntil(() => replies.length === 4)
  t.same(replies, [
    { type: 'string', text: 'héllo' },
    { arrayBuffer: true, byteLength: 3, bytes: [1, 2, 3] },
    { arrayBuffer: true, byteLength: 0, bytes: [] },
    { arrayBuffer: true, byteLength: 5, bytes: [255, 0, 7, 9, 11] }
  ])
  ws.close()
  await closed(ws)
  t.same(unhandled, [])
})

test('the message event is a MessageEvent, as on @hono/node-server: its type, data and default fields, dispatchable and inspectable', async (t) => {
  const app = new Hono<Env>()
  app.get('/event', upgradeWebSocket(() => ({
    onMessage (event, ws) {
      const target = new EventTarget()
      let dispatched: unknown
      target.addEventListener('message', (e) => { dispatched = (e as MessageEvent).data })
      target.dispatchEvent(event)
      ws.send(JSON.stringify({
        isMessageEvent: event instanceof MessageEvent,
        isEvent: event instanceof Event,
        type: event.type,
        data: event.data,
        origin: event.origin,
        lastEventId: event.lastEventId,
        source: event.source,
        ports: event.ports.length,
        dispatched,
        inspected: inspect(event).startsWith('MessageEvent')
      }))
    }
  })))
  const server = Fastify()
  await server.register(fastifyHono, { app, websocket: { server: new WebSocketServer({ noServer: true }) } })
  const base = await start(t, server)
  const ws = new WebSocket(`${base}/event`)
  await once(ws, 'open')
  ws.send('hi')
  const [reply] = await once(ws, 'message') as [Buffer]
  t.same(JSON.parse(reply.toString()), {
    isMessageEvent: true,
    isEvent: true,
    type: 'message',
    data: 'hi',
    origin: '',
    lastEventId: '',
    source: null,
    ports: 0,
    dispatched: 'hi',
    inspected: true
  })
  ws.close()
  await closed(ws)
  t.same(unhandled, [])
})

test('close codes both ways; a client that vanishes without a close frame', async (t) => {
  const seen: Seen = { closes: [], opens: 0, errors: [] }
  const server = Fastify()
  await server.register(fastifyHono, { app: echoApp(seen), websocket: { server: new WebSocketServer({ noServer: true }) } })
  const base = await start(t, server)

  let client = await open(`${base}/echo`)
  client.ws.close(4001, 'client bye')
  t.same(await closed(client.ws), { code: 4001, reason: 'client bye' })
  await waitUntil(() => seen.closes.length === 1)
  t.same(seen.closes[0], { code: 4001, reason: 'client bye' }, 'onClose has the client\'s code and reason')

  client = await open(`${base}/echo`)
  client.ws.send('close me')
  t.same(await closed(client.ws), { code: 4002, reason: 'server bye' }, 'ws.close(code, reason) reaches the client')
  await waitUntil(() => seen.closes.length === 2)
  t.same(seen.closes[1], { code: 4002, reason: 'server bye' })

  client = await open(`${base}/echo`)
  // No close frame: the socket is destroyed under the client.
  ;(client.ws as unknown as { _socket: import('node:net').Socket })._socket.destroy()
  await waitUntil(() => seen.closes.length === 3)
  t.equal(seen.closes[2].code, 1006, 'onClose runs with 1006')
  t.same(unhandled, [])
})

test('an onRequest hook refuses the upgrade with its own status and headers; the app may answer over HTTP', async (t) => {
  const server = Fastify()
  server.addHook('onRequest', async (request, reply) => {
    if (request.headers.authorization !== 'Bearer ok') return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'auth' })
  })
  await server.register(fastifyHono, { app: echoApp(), prefix: '/api', websocket: { server: new WebSocketServer({ noServer: true }) } })
  const base = await start(t, server)

  const refused = await open(`${base}/api/echo`).then(() => null, (err) => err)
  t.equal(refused.status, 401)
  t.equal(refused.headers['www-authenticate'], 'Bearer')
  t.same(JSON.parse(refused.body), { error: 'auth' })

  const ok = await open(`${base}/api/echo`, undefined, { headers: { authorization: 'Bearer ok' } })
  ok.ws.close()
  await closed(ok.ws)

  const answered = await open(`${base}/api/refuse`, undefined, { headers: { authorization: 'Bearer ok' } }).then(() => null, (err) => err)
  t.equal(answered.status, 403, 'a route that answers without upgrading answers over HTTP')
  t.equal(answered.headers['x-why'], 'policy')
  t.equal(answered.body, 'not for you')
})

test('subprotocols: ws picks one (handleProtocols), the app sees it as ws.protocol', async (t) => {
  const server = Fastify()
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => protocols.has('chat.v2') ? 'chat.v2' : false })
  await server.register(fastifyHono, { app: echoApp(), websocket: { server: wss } })
  const base = await start(t, server)
  const { ws, first } = await open(`${base}/echo`, ['chat.v1', 'chat.v2'])
  t.equal(ws.protocol, 'chat.v2')
  t.equal(JSON.parse(first).protocol, 'chat.v2')
  ws.close()
  await closed(ws)
})

/** A Fastify that folds case in paths: `routerOptions` where this Fastify has them, else the older top-level option (5.0). */
async function caseInsensitiveFastify (): Promise<FastifyInstance> {
  const probe = Fastify({ routerOptions: { caseSensitive: false } })
  probe.get('/probe', async () => 'ok')
  const folds = (await probe.inject('/PROBE')).statusCode === 200
  await probe.close()
  return folds ? Fastify({ routerOptions: { caseSensitive: false } }) : Fastify({ caseSensitive: false } as Parameters<typeof Fastify>[0])
}

test('the prefix: percent-encoded and case-folded as for ordinary requests; upgrades elsewhere left to others', async (t) => {
  const server = await caseInsensitiveFastify()
  await server.register(fastifyHono, { app: echoApp(), prefix: '/v2', websocket: { server: new WebSocketServer({ noServer: true }) } })
  server.get('/plain', async () => 'plain')
  const base = await start(t, server)
  for (const path of ['/v2/echo', '/%76%32/echo', '/V2/echo']) {
    const { ws, first } = await open(base + path)
    t.equal(JSON.parse(first).path, '/echo', path)
    ws.close()
    await closed(ws)
  }
  // The only upgrade listener: an upgrade Fastify has no WebSocket for is refused.
  const refused = await open(`${base}/plain`).then(() => null, (err) => err)
  t.equal(refused.status, 200, 'Fastify answers it over HTTP, then the socket closes')

  // Another listener takes the upgrades outside the mount.
  const other = new WebSocketServer({ noServer: true })
  server.server.on('upgrade', (request, socket, head) => {
    if (request.url === '/other') other.handleUpgrade(request, socket, head, (ws) => { ws.send('other') })
  })
  const elsewhere = await open(`${base}/other`)
  t.equal(elsewhere.first, 'other', 'left alone for the other listener')
  elsewhere.ws.close()
  const mounted = await open(`${base}/v2/echo`)
  t.equal(JSON.parse(mounted.first).path, '/echo')
  mounted.ws.close()
  await closed(mounted.ws)
})

for (const order of ['@fastify/websocket first', 'the mount first']) {
  test(`beside @fastify/websocket (${order}): each upgrade handled by exactly one`, { skip: refuses('@fastify/websocket') }, async (t) => {
    const server = Fastify()
    const register = {
      plugin: async () => {
        await server.register(fastifyWebsocket)
        server.get('/fws', { websocket: true }, (socket) => { socket.send('fastify-websocket') })
      },
      mount: async () => {
        await server.register(fastifyHono, { app: echoApp(), prefix: '/hono', websocket: { server: new WebSocketServer({ noServer: true }) } })
      }
    }
    if (order === '@fastify/websocket first') { await register.plugin(); await register.mount() } else { await register.mount(); await register.plugin() }
    const base = await start(t, server)
    for (let i = 0; i < 3; i++) {
      const a = await open(`${base}/fws`)
      t.equal(a.first, 'fastify-websocket')
      const b = await open(`${base}/hono/echo`)
      t.equal(JSON.parse(b.first).path, '/echo')
      b.ws.send('x')
      t.equal((await nextMessage(b.ws)).data.toString(), 'x')
      a.ws.close()
      b.ws.close()
      await Promise.all([closed(a.ws), closed(b.ws)])
    }
    const nowhere = await open(`${base}/nowhere`).then(() => null, (err) => err)
    t.equal(nowhere.status, 404, 'an upgrade no one handles is refused')
    t.same(unhandled, [])
  })
}

test('1,000 sequential and 100 concurrent connections leave no listener or socket behind', async (t) => {
  const seen: Seen = { closes: [], opens: 0, errors: [] }
  const wss = new WebSocketServer({ noServer: true })
  const server = Fastify()
  await server.register(fastifyHono, { app: echoApp(seen), websocket: { server: wss } })
  const base = await start(t, server)
  const listeners = (): number[] => [server.server.listenerCount('upgrade'), wss.listenerCount('headers'), wss.listenerCount('connection')]
  // The first upgrade adds the WebSocketServer's one 'headers' listener for good.
  const first = await open(`${base}/echo`)
  first.ws.close()
  await closed(first.ws)
  const before = listeners()
  t.same(before, [1, 1, 0])
  for (let i = 1; i < 1000; i++) {
    const { ws } = await open(`${base}/echo`)
    ws.close()
    await closed(ws)
  }
  const clients = await Promise.all(Array.from({ length: 100 }, () => open(`${base}/echo`)))
  await Promise.all(clients.map(async ({ ws }, i) => {
    ws.send('n' + i)
    t.equal((await nextMessage(ws)).data.toString(), 'n' + i)
  }))
  await Promise.all(clients.map(({ ws }) => { ws.close(); return closed(ws) }))
  await waitUntil(() => seen.closes.length === 1100)
  t.equal(seen.opens, 1100)
  t.same(listeners(), before, 'no listener added for good')
  t.equal(wss.clients.size, 0, 'no client left')
  await waitUntil(() => new Promise<boolean>((resolve) => server.server.getConnections((_err, count) => resolve(count === 0))))
})

test('fastify.close() closes open WebSockets with 1001, and onClose runs', async (t) => {
  const seen: Seen = { closes: [], opens: 0, errors: [] }
  const server = Fastify()
  await server.register(fastifyHono, { app: echoApp(seen), websocket: { server: new WebSocketServer({ noServer: true }) } })
  const base = await start(t, server)
  const clients = await Promise.all([open(`${base}/echo`), open(`${base}/echo`)])
  const closes = clients.map(({ ws }) => closed(ws))
  await server.close()
  t.same(await Promise.all(closes), [{ code: 1001, reason: 'Server shutting down' }, { code: 1001, reason: 'Server shutting down' }])
  t.same(seen.closes.map((close) => close.code), [1001, 1001])
  t.equal(server.server.listenerCount('upgrade'), 0)
})

test('fastify.close(): a client that does not answer the close frame is terminated after closeTimeout', async (t) => {
  const seen: Seen = { closes: [], opens: 0, errors: [] }
  const server = Fastify()
  await server.register(fastifyHono, { app: echoApp(seen), websocket: { server: new WebSocketServer({ noServer: true }), closeTimeout: 200 } })
  const base = await start(t, server)
  const { ws } = await open(`${base}/echo`)
  ;(ws as unknown as { _socket: import('node:net').Socket })._socket.pause()
  const started = Date.now()
  await server.close()
  t.ok(Date.now() - started < 2000, 'close did not wait for the client')
  t.same(seen.closes.map((close) => close.code), [1006])
  ws.terminate()
})

test('a client that does not read is closed with 1008 once maxBufferedAmount is passed', async (t) => {
  let raw: WebSocket | undefined
  const app = new Hono()
  app.get('/flood', upgradeWebSocket(() => ({
    onOpen (_event, ws) {
      raw = ws.raw as unknown as WebSocket
      const chunk = Buffer.alloc(64 * 1024)
      const pump = (): void => {
        for (let i = 0; i < 16 && ws.readyState === 1; i++) ws.send(chunk)
        if (ws.readyState === 1) setImmediate(pump)
      }
      pump()
    }
  })))
  const server = Fastify()
  await server.register(fastifyHono, { app, websocket: { server: new WebSocketServer({ noServer: true }), maxBufferedAmount: 1024 * 1024 } })
  const base = await start(t, server)
  const ws = new WebSocket(`${base}/flood`)
  await once(ws, 'upgrade')
  // Stop reading: nothing more leaves the kernel's buffers.
  ;(ws as unknown as { _socket: import('node:net').Socket })._socket.pause()
  await waitUntil(() => raw !== undefined && raw.readyState === WebSocket.CLOSING, 10000)
  t.ok(raw!.bufferedAmount < 4 * 1024 * 1024, `bounded: ${raw!.bufferedAmount} bytes buffered`)
  ws.terminate()
})

test('the helper without the websocket option, and @hono/node-server\'s helper, answer 500', async (t) => {
  const app = new Hono()
  app.get('/ours', upgradeWebSocket(() => ({})))
  app.get('/node-server', nodeServerUpgradeWebSocket(() => ({})))
  const server = Fastify()
  await server.register(fastifyHono, { app, prefix: '/off' })
  await server.register(fastifyHono, { app, prefix: '/on', websocket: { server: new WebSocketServer({ noServer: true }) } })
  const base = await start(t, server)
  for (const path of ['/off/ours', '/on/node-server']) {
    const refused = await open(base + path).then(() => null, (err) => err)
    t.equal(refused.status, 500, path)
  }
  // A raw upgrade request with no valid key: ws answers 400 itself.
  const port = Number(new URL(base).port)
  const socket = connect(port, '127.0.0.1')
  socket.write('GET /on/ours HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
  let text = ''
  socket.on('data', (chunk) => { text += chunk })
  await once(socket, 'close')
  t.match(text, /^HTTP\/1\.1 400 /)
  t.same(unhandled, [])
})

test('the websocket option is checked at registration', async (t) => {
  for (const websocket of [null, {}, { server: {} }, { server: new WebSocketServer({ port: 0 }) }, { server: new WebSocketServer({ noServer: true }), maxBufferedAmount: -1 }]) {
    const server = Fastify()
    await t.rejects(async () => { await server.register(fastifyHono, { app: new Hono(), websocket } as never) }, { code: 'FST_ERR_HONO_INVALID_OPTION' })
    const bound = (websocket as { server?: InstanceType<typeof WebSocketServer> } | null)?.server
    if (bound instanceof WebSocketServer && bound.options.port !== undefined) bound.close()
  }
})

async function waitUntil (check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
