// Every example in examples/: built with its build(), then exercised over a
// real socket with fetch; and each one started the way its header says
// (`node examples/<name>.mjs`), to check that it runs on its own.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import Fastify from 'fastify'
import fastifyHono from 'fastify-hono'
import { fetchWithTimeout as get, listen, logCollector, pipelined, readEvents, waitFor, type ServerSentEvent } from './helpers/compat'
import { lacks } from './helpers/optional'
import { refuses } from './helpers/plugin-loads'

interface ExampleModule {
  build (options?: { logger?: unknown }): Promise<FastifyInstance>
}

const examplesDir = join(__dirname, '..', 'examples')

// What an example needs beyond fastify, hono and the plugin; an install
// without it (the CI floor run) skips the example, saying why.
const needs: Record<string, false | string> = {
  rpc: lacks('@hono/zod-validator'),
  websocket: lacks('hono/ws', 'defineWebSocketHelper') || lacks('ws'),
  // A Fastify that refuses @fastify/auth (a 6.0.0 before its release for it).
  auth: refuses('@fastify/auth'),
  deployment: lacks('close-with-grace')
}

async function load<T = ExampleModule> (name: string): Promise<T> {
  return await import(pathToFileURL(join(examplesDir, `${name}.mjs`)).href) as T
}

t.test('strangler: Hono at / beside the Fastify routes, Fastify answers what Hono does not match', async (t) => {
  const { build } = await load('strangler')
  const base = await listen(t, await build())

  // Still in Fastify: Fastify's route wins over the mount's catch-all.
  let res = await get(`${base}/orders`)
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^application\/json; charset=utf-8/)
  t.same(await res.json(), [{ id: 'o-1', total: 42 }])
  res = await get(`${base}/orders/o-1`)
  t.same(await res.json(), { id: 'o-1', total: 42, servedBy: 'fastify' })

  // Moved to Hono.
  res = await get(`${base}/users/1`)
  t.equal(res.status, 200)
  const requestId = res.headers.get('x-request-id')
  t.ok(requestId, 'the Fastify onRequest hook ran for a Hono route')
  t.same(await res.json(), { id: '1', name: 'Ada', servedBy: 'hono', requestId })
  res = await get(`${base}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Barbara' }) })
  t.equal(res.status, 201, 'Hono reads the JSON body itself')
  t.same(await res.json(), { id: '3', name: 'Barbara' })

  // A Hono route that answers 404 itself keeps its answer.
  res = await get(`${base}/users/99`)
  t.equal(res.status, 404)
  t.same(await res.json(), { error: 'no such user' })

  // No route on either side: Fastify's not-found handler, for every method.
  res = await get(`${base}/nowhere?x=1`)
  t.equal(res.status, 404)
  t.ok(res.headers.get('x-request-id'))
  t.same(await res.json(), { error: 'Not Found', method: 'GET', path: '/nowhere?x=1' })
  res = await get(`${base}/orders`, { method: 'DELETE' })
  t.equal(res.status, 404, 'a method Fastify has no route for goes to Hono, then back to Fastify')
  t.same(await res.json(), { error: 'Not Found', method: 'DELETE', path: '/orders' })
  res = await get(`${base}/`)
  t.equal(res.status, 404)
  t.same(await res.json(), { error: 'Not Found', method: 'GET', path: '/' })

  // A POST to a path nobody serves: Fastify's 404, and the connection goes on.
  const small = await pipelined(base, { method: 'POST', path: '/nowhere', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"a":1}') }, '/orders')
  t.same(small.statuses, [404, 200], 'a small body: 404, then the next request on the connection is answered')
  const large = await pipelined(base, { method: 'POST', path: '/nowhere', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(600 * 1024) }, '/orders')
  t.same(large.statuses.slice(0, 1), [404], 'a 600 KiB body: 404')
  t.ok(large.statuses.length === 2 || (large.firstSaidClose && large.closed),
    `then the connection: statuses ${JSON.stringify(large.statuses)}, Connection: close ${large.firstSaidClose}, closed ${large.closed}`)
})

t.test('notFound: \'fastify\' leaves the app\'s own 404 alone where the app is mounted without it', async (t) => {
  const app = new Hono()
  app.get('/x', (c) => c.text('x'))
  app.notFound((c) => c.json({ from: 'the app\'s own notFound' }, 404))
  const server = Fastify()
  server.setNotFoundHandler((_request, reply) => reply.code(404).send({ from: 'fastify' }))
  await server.register(fastifyHono, { app, prefix: '/new', notFound: 'fastify' })
  await server.register(fastifyHono, { app, prefix: '/old' })
  const base = await listen(t, server)

  let res = await get(`${base}/new/nope`)
  t.same(await res.json(), { from: 'fastify' }, 'the notFound: \'fastify\' mount falls through')
  res = await get(`${base}/old/nope`)
  t.equal(res.status, 404)
  t.equal(await res.text(), JSON.stringify({ from: 'the app\'s own notFound' }), 'the other mount keeps the app\'s 404')

  // A notFound handler set on the app after registration changes neither:
  // each mount serves a view of the app taken at registration (Hono's own
  // basePath clone), whose not-found handler is the app's as it was then.
  app.notFound((c) => c.json({ from: 'set later' }, 404))
  res = await get(`${base}/new/nope`)
  t.same(await res.json(), { from: 'fastify' }, 'the fall-through still goes to Fastify')
  res = await get(`${base}/old/nope`)
  t.same(await res.json(), { from: 'the app\'s own notFound' }, 'the plain mount keeps the handler the app had at registration')
  t.same(await (await app.request('/nope')).json(), { from: 'set later' }, 'the app itself has the new one')
})

t.test('sub-apps: one Hono app per prefix, one of them built with basePath and stripPrefix: false', async (t) => {
  const { build } = await load('sub-apps')
  const base = await listen(t, await build())

  let res = await get(`${base}/users/42`)
  t.equal(res.status, 200)
  t.same(await res.json(), { app: 'users', id: '42', path: '/42' }, 'stripped: the app sees the path below its mount')
  res = await get(`${base}/users`)
  t.same(await res.json(), [{ id: '1' }, { id: '2' }], 'the mount point itself is the app\'s /')
  res = await get(`${base}/users/42/nothing`)
  t.equal(res.status, 404)
  t.same(await res.json(), { app: 'users', error: 'no such users route', path: '/42/nothing' }, 'each app keeps its own 404')

  res = await get(`${base}/admin/stats`)
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-admin'), 'yes', 'the admin app\'s middleware')
  t.same(await res.json(), { app: 'admin', path: '/stats' })
  res = await get(`${base}/users/1`)
  t.equal(res.headers.get('x-admin'), null, 'and only the admin app\'s')
  await res.arrayBuffer()

  res = await get(`${base}/api/v1/health?verbose=1`)
  t.equal(res.status, 200)
  t.same(await res.json(), { app: 'api-v1', ok: true, path: '/api/v1/health' }, 'not stripped: the basePath app sees the full path')
  res = await get(`${base}/api/v1/items/7`)
  t.same(await res.json(), { app: 'api-v1', id: '7', path: '/api/v1/items/7' })

  res = await get(`${base}/`)
  t.same(await res.json(), { mounts: ['/users', '/admin', '/api/v1'] }, 'Fastify\'s own route')
  res = await get(`${base}/elsewhere`)
  t.equal(res.status, 404)
  t.equal((await res.json() as { message: string }).message, 'Route GET:/elsewhere not found', 'outside every prefix: Fastify\'s 404')
})

t.test('auth: @fastify/auth in a preHandler hook, the user read from c.env.request, request.log used from Hono', { skip: needs.auth }, async (t) => {
  const { build } = await load('auth')
  const logs = logCollector()
  const base = await listen(t, await build({ logger: { level: 'info', stream: logs.stream } }))

  let res = await get(`${base}/api/me`)
  t.equal(res.status, 401, 'no token: Fastify answers, Hono never runs')
  t.match(await res.json(), { statusCode: 401, message: 'missing or invalid bearer token' })
  res = await get(`${base}/api/me`, { headers: { authorization: 'Bearer wrong' } })
  t.equal(res.status, 401)
  await res.arrayBuffer()
  t.notOk(logs.lines.some((line) => line.msg === 'hono handler read the user'), 'the Hono handler did not run')

  res = await get(`${base}/api/me`, { headers: { authorization: 'Bearer alice-token' } })
  t.equal(res.status, 200)
  const body = await res.json() as { user: unknown, requestId: string }
  t.same(body.user, { name: 'alice', role: 'admin' }, 'the user Fastify set, read through c.env.request')
  const line = logs.lines.find((l) => l.msg === 'hono handler read the user')
  t.ok(line, 'request.log from the Hono handler reached Fastify\'s logger')
  t.equal(line?.reqId, body.requestId, 'with Fastify\'s request id')
  t.equal(line?.user, 'alice')

  res = await get(`${base}/api/things/1`, { method: 'DELETE', headers: { authorization: 'Bearer bob-token' } })
  t.equal(res.status, 403)
  t.same(await res.json(), { error: 'admins only' })
  t.ok(logs.lines.some((l) => l.msg === 'forbidden delete' && l.level === 40 && l.user === 'bob'))
  res = await get(`${base}/api/things/1`, { method: 'DELETE', headers: { authorization: 'Bearer alice-token' } })
  t.equal(res.status, 204)

  res = await get(`${base}/legacy/me`, { headers: { authorization: 'Bearer bob-token' } })
  t.same(await res.json(), { user: { name: 'bob', role: 'reader' }, servedBy: 'fastify' }, 'the same hook guards Fastify routes')
  res = await get(`${base}/health`)
  t.equal(res.status, 200, 'routes outside the guarded scope stay public')
  t.same(await res.json(), { ok: true })
})

t.test('rpc: zod-validated Hono API, called with hc through the prefix', { skip: needs.rpc }, async (t) => {
  const { build, createClient } = await load<ExampleModule & { createClient (origin: string): any }>('rpc')
  const base = await listen(t, await build())
  const client = createClient(base)

  let res: Response = await client.todos.$post({ json: { title: 'write tests' } })
  t.equal(res.status, 201)
  t.same(await res.json(), { id: 1, title: 'write tests', done: false }, 'zod defaults applied')
  res = await client.todos[':id'].$get({ param: { id: '1' } })
  t.equal(res.status, 200)
  t.same(await res.json(), { id: 1, title: 'write tests', done: false })
  res = await client.todos.$get()
  t.same(await res.json(), { todos: [{ id: 1, title: 'write tests', done: false }] })
  t.equal(res.url, `${base}/api/todos`, 'the client\'s URLs include the prefix')

  res = await client.todos.$post({ json: { title: '' } })
  t.equal(res.status, 400, 'validation failure answered by the Hono app')
  const invalid = await res.json() as { error: string, issues: Array<{ path: string[] }> }
  t.equal(invalid.error, 'invalid json')
  t.same(invalid.issues.map((i) => i.path), [['title']])
  res = await client.todos[':id'].$get({ param: { id: 'abc' } })
  t.equal(res.status, 400)
  t.equal((await res.json() as { error: string }).error, 'invalid param')
  res = await client.todos[':id'].$get({ param: { id: '9' } })
  t.equal(res.status, 404)
  t.same(await res.json(), { error: 'no such todo' })

  // The raw body reaches the validator untouched by Fastify's parsers.
  res = await get(`${base}/api/todos`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":' })
  t.equal(res.status, 400, 'malformed JSON: the validator\'s 400, not Fastify\'s parser')
  await res.arrayBuffer()
})

t.test('sse: events arrive one by one while the stream is open, and a client leaving stops the loop', async (t) => {
  const { build } = await load('sse')
  const logs = logCollector()
  const base = await listen(t, await build({ logger: { level: 'info', stream: logs.stream } }))

  const interval = 150
  const res = await get(`${base}/events/clock?count=3&interval=${interval}`)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'text/event-stream')
  t.equal(res.headers.get('cache-control'), 'no-cache')
  t.equal(res.headers.get('content-length'), null, 'no length: the body is streamed')
  const events: ServerSentEvent[] = []
  const result = await readEvents(res.body!, (event) => { events.push(event) })
  t.ok(result.ended)
  t.same(events.map((e) => [e.event, e.id]), [['tick', '0'], ['tick', '1'], ['tick', '2'], ['done', undefined]])
  t.same(events.slice(0, 3).map((e) => (JSON.parse(e.data) as { i: number }).i), [0, 1, 2])
  // Each tick came in its own read, spaced by the server's interval, not all at the end.
  t.same(events.slice(0, 3).map((e) => e.read), [0, 1, 2], 'one read per tick')
  t.ok(events[1].at - events[0].at >= interval * 0.6, `tick 1 came ${events[1].at - events[0].at} ms after tick 0`)
  t.ok(events[2].at - events[1].at >= interval * 0.6, `tick 2 came ${events[2].at - events[1].at} ms after tick 1`)

  // The client leaves after the first event: the handler's onAbort runs.
  const controller = new AbortController()
  const live = await fetch(`${base}/events/clock?count=1000&interval=20`, { signal: controller.signal })
  const first: ServerSentEvent[] = []
  const partial = await readEvents(live.body!, (event) => { first.push(event); return false })
  t.notOk(partial.ended, 'stopped reading after the first event')
  t.equal(first[0].id, '0')
  controller.abort()
  await waitFor(() => logs.lines.some((l) => l.msg === 'sse client went away'), 'the stream\'s onAbort')
  t.pass('onAbort ran when the client went away')
})

t.test('websocket: an onRequest hook refuses a client without a token; members of the room hear each other', { skip: needs.websocket }, async (t) => {
  const { WebSocket } = await import('ws')
  const { build } = await load('websocket')
  const base = (await listen(t, await build())).replace('http', 'ws')
  const refused = await new Promise<number>((resolve) => {
    const ws = new WebSocket(`${base}/chat/room`)
    ws.on('unexpected-response', (_req, res) => { res.resume(); resolve(res.statusCode ?? 0) })
    ws.on('error', () => {})
  })
  t.equal(refused, 401)
  const join = async (): Promise<InstanceType<typeof WebSocket>> => {
    const ws = new WebSocket(`${base}/chat/room?token=secret`)
    await new Promise((resolve) => ws.once('message', resolve))
    return ws
  }
  const [a, b] = [await join(), await join()]
  const heard = new Promise<string>((resolve) => b.once('message', (data) => resolve(data.toString())))
  a.send('hello room')
  t.equal(await heard, 'hello room')
  a.close()
  b.close()
  await Promise.all([a, b].map((ws) => new Promise((resolve) => ws.once('close', resolve))))
})

t.test('deployment: events resume after Last-Event-ID; waitUntil() work runs after the response and close() waits for it; the event stream ends at close', { skip: needs.deployment }, async (t) => {
  const { build, createLog } = await load<ExampleModule & { createLog: (options: { since: number, interval: number }) => unknown }>('deployment')
  const audit: Array<{ order: number, requestId: string }> = []
  const server = await build({ log: createLog({ since: Date.now() - 2000, interval: 100 }), audit } as { logger?: unknown })
  const base = await listen(t, server)

  const resumed = await get(`${base}/v2/events`, { headers: { 'last-event-id': '3' } })
  t.match(resumed.headers.get('content-type'), /^text\/event-stream/)
  const ids: string[] = []
  await readEvents(resumed.body!, (event) => { ids.push(event.id ?? ''); return ids.length < 3 })
  t.same(ids, ['4', '5', '6'], 'the stream starts after the Last-Event-ID, with no gap')

  const order = await get(`${base}/v2/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ item: 'tea' }) })
  t.equal(order.status, 201)
  t.same(await order.json(), { id: 1, item: 'tea' })
  t.same(audit, [], 'answered before the audit write')

  const live = await get(`${base}/v2/events`)
  const seen: string[] = []
  const reading = readEvents(live.body!, (event) => { seen.push(event.id ?? '') })
  await waitFor(() => seen.length > 0, 'a first event')
  await server.close()
  t.same((await reading).ended, true, 'the event stream ended cleanly at close')
  t.equal(audit.length, 1, 'close() waited for the audit write')
  t.equal(audit[0]?.order, 1)
  t.match(audit[0]?.requestId, /\S/, 'with the request id')
})

t.test('migration: the mirror reports the one field the rewrite changed; the share moves, at runtime, keeping each user on one side', async (t) => {
  const { build } = await load('migration')
  const server = await build()
  const base = await listen(t, server)
  for (const id of ['1', '2', '1']) {
    const res = await get(`${base}/users/${id}`)
    t.match(await res.json(), { id, joined: /^\d{4}-\d\d-\d\d$/ }, 'the client gets Fastify\'s answer')
  }
  const mirror = async (): Promise<{ compared: number, mismatched: number, lastMismatch: string[] }> => {
    const routes = await (await get(`${base}/migration`)).json() as Array<{ method: string, url: string, mirror?: { compared: number, mismatched: number, lastMismatch: string[] } }>
    return routes.find((route) => route.method === 'GET' && route.url === '/users/:id')!.mirror!
  }
  let seen = await mirror()
  for (let i = 0; i < 50 && seen.compared < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    seen = await mirror()
  }
  t.match(seen, { compared: 3, mismatched: 3, lastMismatch: ['/joined'] }, 'only /joined differs (/servedAt is ignored)')

  const order = async (user: string): Promise<string> => (await (await get(`${base}/orders`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-user': user }, body: '{"item":"tea"}' })).json() as { by: string }).by
  const share = await (await get(`${base}/migration/share`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"percent":100}' })).json()
  t.match(share, { state: 'both', share: { percent: 100, sticky: 'header x-user' } })
  t.equal(await order('ada'), 'hono', 'share 100: the rewrite')
  await get(`${base}/migration/share`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"percent":50}' })
  const sides = new Map<string, Set<string>>()
  for (let round = 0; round < 3; round++) {
    for (let user = 0; user < 20; user++) {
      const set = sides.get(`u${user}`) ?? new Set<string>()
      set.add(await order(`u${user}`))
      sides.set(`u${user}`, set)
    }
  }
  t.ok([...sides.values()].every((set) => set.size === 1), 'each user stays on one side')
})

t.test('each example runs with `node examples/<name>.mjs` and serves', async (t) => {
  const probes: Record<string, string> = {
    server: '/v2/users/42', // the example behind `npm start`
    strangler: '/users/1',
    'sub-apps': '/api/v1/health',
    auth: '/health',
    rpc: '/api/todos',
    sse: '/events/clock?count=1&interval=10',
    websocket: '/chat/health',
    deployment: '/v2/health',
    migration: '/health'
  }
  for (const [name, path] of Object.entries(probes)) {
    await t.test(name, { skip: needs[name] ?? false }, async (t) => {
      const child = spawn(process.execPath, [join(examplesDir, `${name}.mjs`)], {
        cwd: join(__dirname, '..'),
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe']
      })
      t.teardown(() => { child.kill() })
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
      child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
      await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(output) || child.exitCode !== null, `${name} to listen`, 10_000)
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      t.ok(match, `${name} printed its URL`)
      if (match === null) return
      const res = await get(match[1] + path)
      t.equal(res.status, 200, `${name}: GET ${path}`)
      await res.arrayBuffer()
    })
  }
})

t.test('notFound: \'fastify\' fall-through: what has run by the time Fastify\'s not-found handler answers', async (t) => {
  const calls: string[] = []
  const app = new Hono()
  app.use('*', async (c, next) => {
    calls.push('hono middleware')
    c.header('x-from-hono', 'yes')
    await next()
  })
  app.get('/x', (c) => c.text('x'))
  const server = Fastify()
  for (const hook of ['onRequest', 'preHandler', 'onSend', 'onResponse'] as const) {
    server.addHook(hook, async () => { calls.push(hook) })
  }
  server.setNotFoundHandler((_request, reply) => {
    calls.push('not-found handler')
    reply.code(404).send({ from: 'fastify' })
  })
  await server.register(fastifyHono, { app, prefix: '/new', notFound: 'fastify' })
  const base = await listen(t, server)

  const res = await get(`${base}/new/nope`)
  t.equal(res.status, 404)
  t.same(await res.json(), { from: 'fastify' })
  t.equal(res.headers.get('x-from-hono'), null, 'headers the Hono middleware set are dropped')
  await waitFor(() => calls.includes('onResponse'), 'onResponse')
  t.same(calls, ['onRequest', 'preHandler', 'hono middleware', 'preHandler', 'not-found handler', 'onSend', 'onResponse'],
    'the Hono middleware ran, and the instance\'s preHandler hooks run a second time, for the not-found handler')
})
