import { test } from 'tap'
import { createRequire } from 'node:module'
import { context, SpanKind } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import Fastify from 'fastify'
import { Hono } from 'hono'
import fastifyHono from 'fastify-hono'
import { listen } from './helpers/net'
import { honoRouteOnSpan } from './helpers/route-recipes'
import { refusesMade } from './helpers/plugin-loads'

// A Fastify that refuses @fastify/otel (its range stops before 6.0.0) skips the test, saying why.
const otelRefused = refusesMade('@fastify/otel', 'new m.FastifyOtelInstrumentation().plugin()')

// The usual OpenTelemetry setup (NodeSDK with the auto-instrumentations)
// runs @opentelemetry/instrumentation-http too: its server span is the one
// backends show, @fastify/otel's request span becomes an internal child, and
// the server span takes its route from the RPC metadata that @fastify/otel
// fills with `routeOptions.url` (`/v2/*`). The recipe's hook sets it to the
// Hono route. This file patches `http` for the whole process: it runs alone.

test('with @opentelemetry/instrumentation-http: its server span is named after the Hono route', { skip: otelRefused }, async (t) => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  t.teardown(() => { context.disable() })
  const http = new HttpInstrumentation()
  http.setTracerProvider(provider)
  t.teardown(() => http.disable())
  // The instrumentation patches `http` as it is next required.
  createRequire(__filename)('node:http')
  const otel = new FastifyOtelInstrumentation()
  otel.setTracerProvider(provider)
  t.teardown(() => otel.disable())

  const app = new Hono()
  app.get('/users/:id', (c) => c.json({ id: c.req.param('id') }))
  const server = Fastify()
  t.teardown(() => server.close())
  await server.register(otel.plugin())
  server.addHook('onSend', honoRouteOnSpan)
  await server.register(fastifyHono, { app, prefix: '/v2' })
  const { base } = await listen(server)

  for (const path of ['/v2/users/1', '/v2/users/2', '/v2/nope']) await (await fetch(base + path)).arrayBuffer()
  // The server span ends when the response has finished, maybe after the client read it.
  for (let tries = 0; exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER).length < 3 && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const spans = exporter.getFinishedSpans()
  const serverSpans = spans.filter((span) => span.kind === SpanKind.SERVER)
    .map((span) => ({ name: span.name, route: span.attributes['http.route'], status: span.attributes['http.response.status_code'] }))
  t.same(serverSpans, [
    { name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    { name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    { name: 'GET /v2/*', route: '/v2/*', status: 404 }
  ])
  const requestSpans = spans.filter((span) => span.attributes['fastify.root'] === '@fastify/otel')
    .map((span) => ({ kind: span.kind, name: span.name, route: span.attributes['http.route'] }))
  t.same(requestSpans, [
    { kind: SpanKind.INTERNAL, name: 'GET /v2/users/:id', route: '/v2/users/:id' },
    { kind: SpanKind.INTERNAL, name: 'GET /v2/users/:id', route: '/v2/users/:id' },
    { kind: SpanKind.INTERNAL, name: 'request', route: '/v2/*' }
  ])
})
