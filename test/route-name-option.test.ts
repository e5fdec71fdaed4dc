import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import fastifyMetrics from 'fastify-metrics'
import { listen } from './helpers/net'
import { requestSpansOf } from './helpers/otel-http'
import { durationCounts, hit, jsonLog } from './helpers/route-tools'

// The `routeName` option, with the real packages and no hook of the user's:
// @fastify/otel's request span, fastify-metrics' default route label, the
// `request completed` log line and `request.routeOptions.url` in a later
// hook carry the Hono route rather than the mount's `/v2/*`. With
// @opentelemetry/instrumentation-http as well: route-name-option-otel-http.test.ts.

function usersApp (): Hono {
  const app = new Hono()
  app.use('*', async (c, next) => { await next() })
  app.get('/users/:id', (c) => {
    c.env.request.log.info('in the handler')
    return c.json({ id: c.req.param('id') })
  })
  app.get('/boom/:id', () => { throw new Error('boom') })
  return app
}

test('routeName: @fastify/otel\'s request span has the Hono route as http.route and in its name', async (t) => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const instrumentation = new FastifyOtelInstrumentation()
  instrumentation.setTracerProvider(provider)
  t.teardown(() => instrumentation.disable())

  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(instrumentation.plugin())
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v2', routeName: true })
  server.get('/plain/:id', async () => 'plain')
  const { base } = await listen(server)

  t.same(await hit(base, ['/v2/users/1', '/v2/users/2', '/v2/nope/1', '/v2/boom/1', '/plain/1']), [200, 200, 404, 500, 200])
  await provider.forceFlush()
  const requests = requestSpansOf(exporter)
  t.same(requests, [
    { path: '/v2/users/1', name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    { path: '/v2/users/2', name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    { path: '/v2/nope/1', name: 'request', route: '/v2/*', status: 404 },
    { path: '/v2/boom/1', name: 'GET /v2/boom/:id', route: '/v2/boom/:id', status: 500 },
    { path: '/plain/1', name: 'request', route: '/plain/:id', status: 200 }
  ])
})

test('routeName: fastify-metrics labels each request with its Hono route by default, none per path', async (t) => {
  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(fastifyMetrics, { endpoint: '/metrics', clearRegisterOnInit: true, defaultMetrics: { enabled: false } })
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v2', routeName: true })
  const { base } = await listen(server)

  t.same(await hit(base, ['/v2/users/1', '/v2/users/2', '/v2/nope/1', '/v2/nope/2']), [200, 200, 404, 404])
  const metrics = await (await fetch(base + '/metrics')).text()
  const counts = durationCounts(metrics)
  t.same(counts, [
    '{method="GET",route="/v2/*",status_code="404"} 2',
    '{method="GET",route="/v2/users/:id",status_code="200"} 2'
  ])
  t.notMatch(metrics, /\/v2\/users\/1|\/v2\/nope/, 'no label per path')
})

test('routeName: the log lines from the handler on, `request completed` included, carry the route; routeOptions.url names it', async (t) => {
  const { stream, lines } = jsonLog<{ msg: string, reqId?: string, route?: string, res?: { statusCode: number } }>()
  const server = Fastify({ logger: { stream } })
  t.teardown(() => server.close())
  const seen: Array<string | undefined> = []
  const configs: unknown[] = []
  server.addHook('onResponse', async (request) => {
    seen.push(request.routeOptions.url)
    configs.push(request.routeOptions.config?.url)
  })
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v2', routeName: true })
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v3' })
  const { base } = await listen(server)

  t.same(await hit(base, ['/v2/users/1', '/v2/nope/1', '/v3/users/1', '/nowhere']), [200, 404, 200, 404])
  const completed = lines.filter((line) => line.msg === 'request completed').map((line) => ({ route: line.route, status: line.res?.statusCode }))
  t.same(completed, [
    { route: '/v2/users/:id', status: 200 },
    { route: undefined, status: 404 }, // no Hono route: nothing invented
    { route: undefined, status: 200 }, // a mount without the option
    { route: undefined, status: 404 }
  ])
  const handler = lines.filter((line) => line.msg === 'in the handler').map((line) => line.route)
  t.same(handler, ['/v2/users/:id', undefined], "the handler's own lines too, on the mount with the option")
  const incoming = lines.find((line) => line.msg === 'incoming request')
  t.equal(incoming?.route, undefined, 'the line written before the app routed the request has none')
  t.equal(new Set(lines.filter((line) => line.msg !== 'Server listening at ' && line.reqId !== undefined).map((line) => line.reqId)).size, 4, 'each request keeps its reqId')
  t.same(seen, ['/v2/users/:id', '/v2/*', '/v3/*', undefined], 'request.routeOptions.url in a later hook')
  t.same(configs, ['/v2/*', '/v2/*', '/v3/*', undefined], "the rest of routeOptions is Fastify's, config included")
})

test('routeName: must be a boolean', async (t) => {
  const server = Fastify()
  t.teardown(() => server.close())
  await t.rejects(async () => { await server.register(fastifyHono, { app: new Hono(), routeName: 'yes' as unknown as boolean }) }, { code: 'FST_ERR_HONO_INVALID_OPTION', message: /"routeName" must be a boolean/ })
})
