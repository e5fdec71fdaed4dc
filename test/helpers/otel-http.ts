import { createRequire } from 'node:module'
import { context, SpanKind } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { Test } from 'tap'

// The usual OpenTelemetry setup (NodeSDK with the auto-instrumentations):
// @opentelemetry/instrumentation-http's server span, the one backends show,
// with @fastify/otel's request span as an internal child. It patches `http`
// for the whole process: a test file that uses it runs alone.

/** The tracer, the HTTP instrumentation and @fastify/otel, undone when `t` ends. */
export function traceHttp (t: Test): { exporter: InMemorySpanExporter, otel: FastifyOtelInstrumentation } {
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
  return { exporter, otel }
}

/** GET /v2/users/1, /v2/users/2 and /v2/nope, then the server spans and @fastify/otel's request spans they made. */
export async function spansOfThreeRequests (exporter: InMemorySpanExporter, base: string): Promise<{ serverSpans: unknown[], requestSpans: unknown[] }> {
  for (const path of ['/v2/users/1', '/v2/users/2', '/v2/nope']) await (await fetch(base + path)).arrayBuffer()
  // The server span ends when the response has finished, maybe after the client read it.
  for (let tries = 0; exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER).length < 3 && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const spans = exporter.getFinishedSpans()
  return {
    serverSpans: spans.filter((span) => span.kind === SpanKind.SERVER)
      .map((span) => ({ name: span.name, route: span.attributes['http.route'], status: span.attributes['http.response.status_code'] })),
    requestSpans: spans.filter((span) => span.attributes['fastify.root'] === '@fastify/otel')
      .map((span) => ({ kind: span.kind, name: span.name, route: span.attributes['http.route'] }))
  }
}

/** What those three requests should make, with the Hono route as the name. */
export const HONO_ROUTE_SPANS = {
  serverSpans: [
    { name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    { name: 'GET /v2/users/:id', route: '/v2/users/:id', status: 200 },
    { name: 'GET /v2/*', route: '/v2/*', status: 404 }
  ],
  requestSpans: [
    { kind: SpanKind.INTERNAL, name: 'GET /v2/users/:id', route: '/v2/users/:id' },
    { kind: SpanKind.INTERNAL, name: 'GET /v2/users/:id', route: '/v2/users/:id' },
    { kind: SpanKind.INTERNAL, name: 'request', route: '/v2/*' }
  ]
}

/** @fastify/otel's request spans (server spans when it runs alone): path, name, route and status. */
export function requestSpansOf (exporter: InMemorySpanExporter): unknown[] {
  return exporter.getFinishedSpans()
    .filter((span) => span.kind === SpanKind.SERVER)
    .map((span) => ({ path: span.attributes['url.path'], name: span.name, route: span.attributes['http.route'], status: span.attributes['http.response.status_code'] }))
}
