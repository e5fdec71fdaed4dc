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
import { honoRouteOnSpan, resWithRoute, routeLabel } from './helpers/route-recipes'
import { refuses, refusesMade } from './helpers/plugin-loads'

// A Fastify that refuses @fastify/otel (its range stops before 6.0.0) skips the test, saying why.
const otelRefused = refusesMade('@fastify/otel', 'new m.FastifyOtelInstrumentation().plugin()')

// The recipes of docs/route-names.md (in helpers/route-recipes.ts), run
// against the real packages: @fastify/otel's request span, fastify-metrics'
// route label and the `request completed` log line carry the Hono route
// rather than `/v2/*`. With @opentelemetry/instrumentation-http as well:
// route-names-otel-http.test.ts.

function usersApp (): Hono {
  const app = new Hono()
  app.use('*', async (c, next) => { await next() })
  app.get('/users/:id', (c) => c.json({ id: c.req.param('id') }))
  app.get('/boom/:id', () => { throw new Error('boom') })
  return app
}

test('@fastify/otel: the request span has the Hono route as http.route and in its name', { skip: otelRefused }, async (t) => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const instrumentation = new FastifyOtelInstrumentation()
  instrumentation.setTracerProvider(provider)
  t.teardown(() => instrumentation.disable())

  const server = Fastify()
  t.teardown(() => server.close())
  // @fastify/otel first: it instruments the routes defined after it.
  await server.register(instrumentation.plugin())
  server.addHook('onSend', honoRouteOnSpan)
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v2' })
  server.get('/plain/:id', async () => 'plain')
  const { base } = await listen(server)

  t.same(await hit(base, ['/v2/users/1', '/v2/users/2', '/v2/nope/1', '/v2/boom/1', '/plain/1']), [200, 200, 404, 500, 200])
  await provider.forceFlush()
  const requests = requestSpansOf(exporter)
  t.same(requests, [
    { path: '/v2/users/1', name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    { path: '/v2/users/2', name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    // No Hono route: the span keeps what @fastify/otel gave it, the mount's catch-all.
    { path: '/v2/nope/1', name: 'request', route: '/v2/*', status: 404 },
    { path: '/v2/boom/1', name: 'GET /v2/boom/:id', route: '/v2/boom/:id', status: 500 },
    { path: '/plain/1', name: 'request', route: '/plain/:id', status: 200 }
  ])
})

test('fastify-metrics: one route label per Hono route, none per path for a not-found', { skip: refuses('fastify-metrics') }, async (t) => {
  const server = Fastify()
  t.teardown(() => server.close())
  // Before the mounts: fastify-metrics lists the routes it measures as they are added.
  await server.register(fastifyMetrics, {
    endpoint: '/metrics',
    clearRegisterOnInit: true,
    defaultMetrics: { enabled: false },
    routeMetrics: {
      overrides: {
        labels: { getRouteLabel: routeLabel }
      }
    }
  })
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v2' })
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

test('the request log: a res serializer puts the route on the `request completed` line', async (t) => {
  const { stream, lines } = jsonLog<{ msg: string, res?: { statusCode: number, route?: string } }>()
  const server = Fastify({
    logger: {
      stream,
      serializers: { res: resWithRoute }
    }
  })
  t.teardown(() => server.close())
  await server.register(fastifyHono, { app: usersApp(), prefix: '/v2' })
  const { base } = await listen(server)

  t.same(await hit(base, ['/v2/users/1', '/v2/users/2', '/v2/nope/1', '/nowhere']), [200, 200, 404, 404])
  const completed = lines.filter((line) => line.msg === 'request completed').map((line) => line.res)
  t.same(completed, [
    { statusCode: 200, route: '/v2/users/:id' },
    { statusCode: 200, route: '/v2/users/:id' },
    { statusCode: 404, route: '/v2/*' },
    { statusCode: 404 } // Fastify's own not-found: no route at all
  ])
})
