// Moving a route with proof: a Fastify route and its Hono rewrite (which
// differs on purpose in one JSON field) mirrored, a share of traffic shifted
// through Fastify's router, and fastify.honoMigration() saying where each
// route stands. Real sockets (fetch over keep-alive connections).
import { test } from 'tap'
import type { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import fastifyHono, { type MigrationOption } from 'fastify-hono'
import { listen } from './helpers/net'
import { logCollector } from './helpers/compat'
import { lacks } from './helpers/optional'

interface Lines { lines: Array<Record<string, unknown>>, logger: { level: string, stream: Writable } }

function logLines (level = 'info'): Lines {
  const { stream, lines } = logCollector()
  return { lines, logger: { level, stream } }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The rewrite: the same user, but `role` differs on purpose, and `servedAt` always does. */
function rewrite (seen: { hono: number, bodies: unknown[] } = { hono: 0, bodies: [] }): Hono {
  const app = new Hono()
  app.get('/users/:id', (c) => {
    seen.hono++
    return c.json({ id: c.req.param('id'), name: 'Ada', role: 'admin', servedAt: Date.now() + 1, tags: ['a', 'b'] })
  })
  app.get('/broken', () => { throw new Error('the rewrite is not done') })
  app.get('/slow', async (c) => { await sleep(300); return c.json({ ok: true }) })
  app.post('/orders', async (c) => {
    const body = await c.req.json()
    seen.hono++
    seen.bodies.push(body)
    return c.json({ side: 'hono', received: body }, 201)
  })
  app.get('/hono-only', (c) => c.json({ by: c.env.reply.statusCode }))
  return app
}

/** The Fastify routes the rewrite replaces, registered after the mount (as a plugin whose hooks they need). */
function fastifyRoutes (fastify: FastifyInstance, seen: { fastify: number } = { fastify: 0 }): void {
  fastify.get('/users/:id', async (request) => {
    seen.fastify++
    return { id: (request.params as { id: string }).id, name: 'Ada', role: 'user', servedAt: Date.now(), tags: ['a', 'b'] }
  })
  fastify.get('/broken', async () => ({ ok: true }))
  fastify.get('/slow', async () => ({ ok: true }))
  fastify.post('/orders', async (request) => {
    seen.fastify++
    return { side: 'fastify', received: request.body }
  })
  fastify.get('/fastify-only', async () => 'still here')
}

async function server (migration: MigrationOption, options: { logger?: Lines['logger'], seen?: { hono: number, bodies: unknown[] }, fastifySeen?: { fastify: number } } = {}): Promise<{ fastify: FastifyInstance, base: string }> {
  const fastify = Fastify({ logger: options.logger ?? false })
  await fastify.register(fastifyHono, { app: rewrite(options.seen), prefix: '/api', migration })
  await fastify.register(async (scope) => { fastifyRoutes(scope, options.fastifySeen) }, { prefix: '/api' })
  const { base } = await listen(fastify)
  return { fastify, base }
}

async function until (done: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); !done(); await sleep(10)) {
    if (Date.now() - started > 5000) throw new Error(`still waiting: ${what}`)
  }
}

test('mirroring reports exactly the field that differs, not one marked to ignore, for every request sampled, and the client gets Fastify\'s answer', async (t) => {
  const { lines, logger } = logLines('warn')
  const { fastify, base } = await server({ routes: { 'GET /api/users/:id': { mirror: { ignore: ['/servedAt'] } } } }, { logger })
  t.teardown(() => fastify.close())
  for (let i = 0; i < 20; i++) {
    const response = await fetch(`${base}/api/users/${i}`)
    t.match(await response.json(), { id: String(i), role: 'user' }, 'Fastify answered the client')
  }
  const route = (): NonNullable<ReturnType<FastifyInstance['honoMigration']>[number]['mirror']> => fastify.honoMigration().find((entry) => entry.url === '/api/users/:id' && entry.method === 'GET')!.mirror!
  await until(() => route().compared === 20, 'every mirrored run')
  t.match(route(), { sample: 1, compared: 20, matched: 0, mismatched: 20, errored: 0, skipped: 0, lastMismatch: ['/role'] })
  const mismatches = lines.filter((line) => line.msg === 'fastify-hono mirror: the Hono twin answered differently')
  t.equal(mismatches.length, 20, 'each mismatch logged')
  t.same(mismatches[0].paths, ['/role'], 'the path, and only it: /servedAt is ignored')
  t.notOk('differences' in mismatches[0], 'no values in the log by default')
  t.notMatch(JSON.stringify(mismatches), /admin/, 'the Hono value is nowhere in the logs')
  t.equal(lines.filter((line) => (line.level as number) >= 50).length, 0, 'nothing at error')
})

test('mirror.sample: about that share of requests is mirrored; logValues puts the values in the log', async (t) => {
  const { lines, logger } = logLines('warn')
  const { fastify, base } = await server({ logValues: true, routes: { 'GET /api/users/:id': { mirror: { sample: 0.25 } } } }, { logger })
  t.teardown(() => fastify.close())
  for (let i = 0; i < 400; i++) await (await fetch(`${base}/api/users/${i}`)).arrayBuffer()
  await sleep(100)
  const mirror = fastify.honoMigration().find((entry) => entry.url === '/api/users/:id' && entry.method === 'GET')!.mirror!
  // Binomial(400, 0.25): mean 100, sd 8.7; ±5 sd.
  t.ok(mirror.compared >= 57 && mirror.compared <= 143, `${mirror.compared} of 400 mirrored`)
  t.equal(mirror.mismatched, mirror.compared)
  t.same(mirror.lastMismatch.sort(), ['/role', '/servedAt'])
  const logged = lines.find((line) => line.msg === 'fastify-hono mirror: the Hono twin answered differently')
  t.match(logged?.differences, [{ path: '/role', fastify: 'user', hono: 'admin' }], 'the values, opted in')
})

test('a rewrite that throws is counted as errored; the client never sees it, nothing is logged at error, no onError hook runs', async (t) => {
  const { lines, logger } = logLines('info')
  const fastify = Fastify({ logger })
  const errorsSeen: unknown[] = []
  fastify.addHook('onError', async (_request, _reply, err) => { errorsSeen.push(err) })
  await fastify.register(fastifyHono, { app: rewrite(), prefix: '/api', migration: { routes: { 'GET /api/broken': { mirror: true } } } })
  await fastify.register(async (scope) => { fastifyRoutes(scope) }, { prefix: '/api' })
  const { base } = await listen(fastify)
  t.teardown(() => fastify.close())
  for (let i = 0; i < 5; i++) {
    const response = await fetch(`${base}/api/broken`)
    t.same([response.status, await response.json()], [200, { ok: true }])
  }
  const mirror = (): { errored: number } => fastify.honoMigration().find((entry) => entry.url === '/api/broken')!.mirror!
  await until(() => mirror().errored === 5, 'the five failures counted')
  t.equal(lines.filter((line) => (line.level as number) >= 50).length, 0, 'nothing logged at error')
  t.same(errorsSeen, [], 'no onError hook ran')
  t.notMatch(JSON.stringify(lines), /the rewrite is not done/, 'the message stays out of info and above')
})

test('bounded: a run past mirrorTimeout counts as errored; past mirrorConcurrency a request is skipped and counted', async (t) => {
  const { fastify, base } = await server({ mirrorTimeout: 50, mirrorConcurrency: 2, routes: { 'GET /api/slow': { mirror: true } } })
  t.teardown(() => fastify.close())
  await Promise.all(Array.from({ length: 6 }, async () => (await fetch(`${base}/api/slow`)).arrayBuffer()))
  const mirror = (): { errored: number, skipped: number, skippedBy: Record<string, number>, compared: number } => fastify.honoMigration().find((entry) => entry.url === '/api/slow')!.mirror!
  await until(() => mirror().errored + mirror().skipped === 6, 'all six accounted for')
  t.equal(mirror().compared, 0)
  t.ok(mirror().errored >= 2 && mirror().errored <= 4, `timed out: ${mirror().errored}`)
  t.ok(mirror().skippedBy.mirrorConcurrency >= 2, `skipped at the bound: ${mirror().skippedBy.mirrorConcurrency}`)
})

test('with mirroring on, 1,000 GETs answer exactly as with it off', async (t) => {
  const answers = async (migration: MigrationOption): Promise<string[]> => {
    const { fastify, base } = await server(migration)
    const seen: string[] = []
    try {
      for (let i = 0; i < 1000; i++) {
        const response = await fetch(`${base}/api/users/${i % 50}`)
        const body = await response.json() as Record<string, unknown>
        delete body.servedAt
        const headers = [...response.headers].filter(([name]) => name !== 'date' && name !== 'keep-alive')
        seen.push(JSON.stringify([response.status, headers, body]))
      }
    } finally {
      await fastify.close()
    }
    return seen
  }
  const off = await answers({ routes: {} })
  const on = await answers({ routes: { 'GET /api/users/:id': { mirror: true } } })
  t.equal(on.length, 1000)
  t.same(on, off, 'the same status, headers and body, request by request')
})

test('a 10% share sends 10% of 2,000 requests to Hono, within binomial bounds; the rest go to the Fastify route', async (t) => {
  const seen = { hono: 0, bodies: [] as unknown[] }
  const fastifySeen = { fastify: 0 }
  const { fastify, base } = await server({ routes: { 'GET /api/users/:id': { share: 10 } } }, { seen, fastifySeen })
  t.teardown(() => fastify.close())
  let hono = 0
  for (let i = 0; i < 2000; i++) {
    const body = await (await fetch(`${base}/api/users/${i}`)).json() as { role: string }
    if (body.role === 'admin') hono++
  }
  // Binomial(2000, 0.1): mean 200, sd 13.4; ±5 sd.
  t.ok(hono >= 133 && hono <= 267, `${hono} of 2000 went to Hono`)
  t.equal(seen.hono, hono, 'the app served exactly those')
  t.equal(fastifySeen.fastify, 2000 - hono, 'the Fastify route the rest')
  const share = fastify.honoMigration().find((entry) => entry.url === '/api/users/:id' && entry.method === 'GET')!.share!
  t.same(share, { percent: 10, sticky: undefined, hono, fastify: 2000 - hono })
})

test('a sticky key always gets the same side; a request without the key stays on Fastify', async (t) => {
  const { fastify, base } = await server({ routes: { 'GET /api/users/:id': { share: 50, sticky: { header: 'x-user' } } } })
  t.teardown(() => fastify.close())
  const sides = new Map<string, Set<string>>()
  for (let round = 0; round < 5; round++) {
    for (let user = 0; user < 40; user++) {
      const body = await (await fetch(`${base}/api/users/1`, { headers: { 'x-user': `user-${user}` } })).json() as { role: string }
      const set = sides.get(`user-${user}`) ?? new Set()
      set.add(body.role)
      sides.set(`user-${user}`, set)
    }
  }
  t.ok([...sides.values()].every((set) => set.size === 1), 'each user saw one side, five times')
  const onHono = [...sides.values()].filter((set) => set.has('admin')).length
  t.ok(onHono > 5 && onHono < 35, `both sides are used (${onHono} of 40 users on Hono)`)
  for (let i = 0; i < 10; i++) t.equal((await (await fetch(`${base}/api/users/1`)).json() as { role: string }).role, 'user', 'no key: Fastify')
})

test('a sticky cookie, and a share changed at runtime taking effect on the next request', async (t) => {
  const { fastify, base } = await server({ routes: { 'GET /api/users/:id': { share: 0, sticky: { cookie: 'sid' } } } })
  t.teardown(() => fastify.close())
  const role = async (): Promise<string> => (await (await fetch(`${base}/api/users/1`, { headers: { cookie: 'theme=dark; sid=abc123' } })).json() as { role: string }).role
  t.equal(await role(), 'user', 'share 0: Fastify')
  fastify.setHonoShare('GET /api/users/:id', 100)
  t.equal(await role(), 'admin', 'share 100: the very next request goes to Hono')
  fastify.setHonoShare('GET /api/users/:id', 0)
  t.equal(await role(), 'user', 'and back')
  t.throws(() => fastify.setHonoShare('GET /api/users/:id', 120), { code: 'FST_ERR_HONO_INVALID_OPTION' })
  t.throws(() => fastify.setHonoShare('GET /api/nowhere', 10), /no route with a share/)
})

test('a POST moved by a share has its body read by the app, through the mount scope\'s hooks; one left on Fastify is parsed by Fastify', async (t) => {
  const seen = { hono: 0, bodies: [] as unknown[] }
  const hooks: string[] = []
  const fastify = Fastify()
  await fastify.register(async (scope) => {
    scope.addHook('onRequest', async (request) => { hooks.push(`mount scope ${request.method}`) })
    await scope.register(fastifyHono, { app: rewrite(seen), prefix: '/api', migration: { routes: { 'POST /api/orders': { share: 100 } } } })
  })
  await fastify.register(async (scope) => { fastifyRoutes(scope) }, { prefix: '/api' })
  const { base } = await listen(fastify)
  t.teardown(() => fastify.close())
  const order = { item: 'tea', quantity: 2, note: 'x'.repeat(20_000) }
  const response = await fetch(`${base}/api/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) })
  t.equal(response.status, 201)
  t.same(await response.json(), { side: 'hono', received: order })
  t.same(seen.bodies, [order], 'the app read the whole body')
  t.same(hooks, ['mount scope POST'], 'the mount scope\'s hooks ran')
  fastify.setHonoShare('POST /api/orders', 0)
  const back = await fetch(`${base}/api/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) })
  t.same(await back.json(), { side: 'fastify', received: order })
  t.equal(hooks.length, 1, 'the Fastify route is outside the mount scope')
})

test('a side-effect-free POST is mirrored with the same body bytes; a POST not marked so is refused at registration', async (t) => {
  const seen = { hono: 0, bodies: [] as unknown[] }
  const { fastify, base } = await server({ routes: { 'POST /api/orders': { mirror: { sideEffectFree: true } } } }, { seen })
  t.teardown(() => fastify.close())
  const order = { item: 'tea', quantity: 2 }
  const response = await fetch(`${base}/api/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) })
  t.same(await response.json(), { side: 'fastify', received: order })
  await until(() => seen.hono === 1, 'the mirrored run')
  t.same(seen.bodies, [order], 'the app got the same body')
  await until(() => fastify.honoMigration().find((entry) => entry.url === '/api/orders')!.mirror!.compared === 1, 'compared')
  t.same(fastify.honoMigration().find((entry) => entry.url === '/api/orders')!.mirror!.lastMismatch.sort(), ['/side', 'status'])

  const refused = Fastify()
  await t.rejects(async () => { await refused.register(fastifyHono, { app: rewrite(), prefix: '/api', migration: { routes: { 'POST /api/orders': { mirror: true } } } }) },
    { code: 'FST_ERR_HONO_INVALID_OPTION', message: /POST is not a safe method/ })
})

test('honoMigration() shows each state, the share, the mirror, and the Hono routes that read Fastify\'s bindings; printHonoMigration() prints it', async (t) => {
  const { fastify, base } = await server({ routes: { 'GET /api/users/:id': { mirror: true }, 'POST /api/orders': { share: 25 } } })
  t.teardown(() => fastify.close())
  await fetch(`${base}/api/hono-only`)
  await fetch(`${base}/api/users/1`)
  await until(() => fastify.honoMigration().find((entry) => entry.url === '/api/users/:id')!.mirror!.compared === 1, 'compared')
  const byRoute = Object.fromEntries(fastify.honoMigration().map((entry) => [`${entry.method} ${entry.url}`, entry]))
  t.match(byRoute['GET /api/fastify-only'], { state: 'fastify' })
  t.match(byRoute['GET /api/hono-only'], { state: 'hono', readsFastify: ['reply'] })
  t.match(byRoute['GET /api/users/:id'], { state: 'both', mirror: { compared: 1, mismatched: 1 } })
  t.notOk('readsFastify' in byRoute['GET /api/users/:id'], 'the rewrite reads no binding')
  t.match(byRoute['POST /api/orders'], { state: 'both', share: { percent: 25 } })
  t.match(byRoute['GET /api/broken'], { state: 'both' })
  t.notOk('HEAD /api/fastify-only' in byRoute, 'an automatic HEAD route stands with its GET')
  const table = fastify.printHonoMigration()
  t.match(table, /^method\s+url\s+state/)
  t.match(table, /GET\s+\/api\/hono-only\s+hono\s+reply/)
  t.match(table, /POST\s+\/api\/orders\s+both\s+25%/)
  t.match(table, /GET\s+\/api\/users\/:id\s+both\s+1 0 1 0 0/)
})

test('registration mistakes name the migration option', async (t) => {
  const cases: Array<[unknown, RegExp]> = [
    [{ routes: { 'users/:id': {} } }, /must be 'METHOD \/path'/],
    [{ routes: { 'GET /v1/users': { share: 10 } } }, /is not under the mount's prefix "\/api"/],
    [{ routes: { 'GET /api/users/:id': { share: 101 } } }, /percentage from 0 to 100/],
    [{ routes: { 'GET /api/users/:id': { sticky: { header: '' } } } }, /sticky must be/],
    [{ routes: { 'GET /api/users/:id': { mirror: { sample: 2 } } } }, /mirror.sample must be a number from 0 to 1/],
    [{ routes: { 'GET /api/users/:id': { shares: 1 } } }, /has no "shares"/],
    [{ mirrorConcurrency: 0 }, /mirrorConcurrency must be a positive integer/]
  ]
  for (const [migration, message] of cases) {
    const fastify = Fastify()
    await t.rejects(async () => { await fastify.register(fastifyHono, { app: rewrite(), prefix: '/api', migration: migration as MigrationOption }) }, { code: 'FST_ERR_HONO_INVALID_OPTION', message }, String(message))
  }
  // At ready: no twin in the app; a mirrored route whose Fastify route came before the mount, or has none.
  const noTwin = Fastify()
  await noTwin.register(fastifyHono, { app: rewrite(), prefix: '/api', migration: { routes: { 'GET /api/nowhere': { share: 5 } } } })
  await t.rejects(noTwin.ready(), { code: 'FST_ERR_HONO_INVALID_OPTION', message: /the app has no route GET \/nowhere/ })
  const before = Fastify()
  before.get('/api/users/:id', async () => ({}))
  await before.register(fastifyHono, { app: rewrite(), prefix: '/api', migration: { routes: { 'GET /api/users/:id': { mirror: true } } } })
  await t.rejects(before.ready(), { message: /added before the mount: register the mount first/ })
  const none = Fastify()
  await none.register(fastifyHono, { app: rewrite(), prefix: '/api', migration: { routes: { 'GET /api/users/:id': { mirror: true } } } })
  await t.rejects(none.ready(), { message: /no Fastify route answers it/ })
})

test('fastify-metrics: the migration\'s figures on its /metrics, with no request values in the labels', { skip: lacks('fastify-metrics') }, async (t) => {
  const { default: metricsPlugin } = await import('fastify-metrics')
  const fastify = Fastify()
  await fastify.register(metricsPlugin, { endpoint: '/metrics', defaultMetrics: { enabled: false }, routeMetrics: { enabled: false } })
  await fastify.register(fastifyHono, { app: rewrite(), prefix: '/api', migration: { routes: { 'GET /api/users/:id': { mirror: true, share: 0 } } } })
  await fastify.register(async (scope) => { fastifyRoutes(scope) }, { prefix: '/api' })
  const { base } = await listen(fastify)
  t.teardown(() => fastify.close())
  await fetch(`${base}/api/users/secret-id-42`)
  await until(() => fastify.honoMigration().find((entry) => entry.url === '/api/users/:id')!.mirror!.compared === 1, 'compared')
  const text = await (await fetch(`${base}/metrics`)).text()
  t.match(text, /fastify_hono_migration_routes\{state="both"\} [1-9]/)
  t.match(text, /fastify_hono_mirror_runs_total\{method="GET",route="\/api\/users\/:id",result="mismatched"\} 1/)
  t.match(text, /fastify_hono_share_percent\{method="GET",route="\/api\/users\/:id"\} 0/)
  t.match(text, /fastify_hono_split_requests_total\{method="GET",route="\/api\/users\/:id",side="fastify"\} 1/)
  t.notMatch(text, /secret-id-42|admin/, 'no request values')
})

test('OpenTelemetry: with an SDK\'s meter provider registered, the same figures are observable instruments', { skip: lacks('@opentelemetry/sdk-metrics') || lacks('@opentelemetry/api') }, async (t) => {
  const { MeterProvider, InMemoryMetricExporter, PeriodicExportingMetricReader, AggregationTemporality } = await import('@opentelemetry/sdk-metrics')
  const { metrics } = await import('@opentelemetry/api')
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
  t.teardown(async () => { await reader.shutdown(); metrics.disable() })
  const { fastify, base } = await server({ routes: { 'GET /api/users/:id': { mirror: true }, 'POST /api/orders': { share: 100 } } })
  t.teardown(() => fastify.close())
  await fetch(`${base}/api/users/7`)
  await fetch(`${base}/api/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"item":"tea"}' })
  await until(() => fastify.honoMigration().find((entry) => entry.url === '/api/users/:id')!.mirror!.compared === 1, 'compared')
  await reader.forceFlush()
  const points = new Map<string, number>()
  for (const resource of exporter.getMetrics()) {
    for (const scope of resource.scopeMetrics) {
      if (scope.scope.name !== 'fastify-hono') continue
      for (const metric of scope.metrics) {
        for (const point of metric.dataPoints) points.set(`${metric.descriptor.name} ${JSON.stringify(point.attributes)}`, point.value as number)
      }
    }
  }
  t.equal(points.get('fastify_hono_mirror_runs_total {"method":"GET","route":"/api/users/:id","result":"mismatched"}'), 1)
  t.equal(points.get('fastify_hono_split_requests_total {"method":"POST","route":"/api/orders","side":"hono"}'), 1)
  t.equal(points.get('fastify_hono_share_percent {"method":"POST","route":"/api/orders"}'), 100)
  t.ok((points.get('fastify_hono_migration_routes {"state":"both"}') ?? 0) >= 2, 'routes by state')
})

test('fastify.inject() shows what the socket shows for a shifted request and a mirrored one', async (t) => {
  const { fastify, base } = await server({ routes: { 'GET /api/users/:id': { mirror: true }, 'POST /api/orders': { share: 100 } } })
  t.teardown(() => fastify.close())
  const headersOf = (headers: Record<string, unknown>): Record<string, unknown> => {
    const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers
    return rest
  }
  const order = { item: 'tea' }
  const socket = await fetch(`${base}/api/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) })
  const injected = await fastify.inject({ method: 'POST', url: '/api/orders', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(order) })
  t.equal(injected.statusCode, socket.status)
  t.same(headersOf(injected.headers), headersOf(Object.fromEntries(socket.headers)))
  t.same(injected.json(), await socket.json())
  const mirroredSocket = await fetch(`${base}/api/users/1`)
  const mirroredInjected = await fastify.inject('/api/users/1')
  t.equal(mirroredInjected.statusCode, mirroredSocket.status)
  t.same(Object.keys(headersOf(mirroredInjected.headers)).sort(), Object.keys(headersOf(Object.fromEntries(mirroredSocket.headers))).sort())
  t.equal(mirroredInjected.headers['content-type'], mirroredSocket.headers.get('content-type'))
  await until(() => fastify.honoMigration().find((entry) => entry.url === '/api/users/:id')!.mirror!.compared === 2, 'both mirrored')
})
