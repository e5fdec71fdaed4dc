import { test } from 'tap'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'
import { HONO_ROUTE_SPANS, spansOfThreeRequests, traceHttp } from './helpers/otel-http'

// The usual OpenTelemetry setup (NodeSDK with the auto-instrumentations)
// runs @opentelemetry/instrumentation-http too: its server span is the one
// backends show, @fastify/otel's request span becomes an internal child, and
// the server span takes its route from the RPC metadata that @fastify/otel
// fills with `routeOptions.url` (`/v2/*`). The `routeName` option sets it
// to the Hono route, with no hook of the user's. This file patches `http`
// for the whole process: it runs alone.

test('routeName with @opentelemetry/instrumentation-http: its server span is named after the Hono route', async (t) => {
  const { exporter, otel } = traceHttp(t)

  const app = new Hono()
  app.get('/users/:id', (c) => c.json({ id: c.req.param('id') }))
  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(otel.plugin())
  await server.register(fastifyHono, { app, prefix: '/v2', routeName: true })
  const { base } = await listen(server)

  const { serverSpans, requestSpans } = await spansOfThreeRequests(exporter, base)
  t.same(serverSpans, HONO_ROUTE_SPANS.serverSpans)
  t.same(requestSpans, HONO_ROUTE_SPANS.requestSpans)
})
