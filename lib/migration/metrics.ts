import type { FastifyInstance } from 'fastify'
import { registeredMeter } from '../internals/otel-meter.js'
import type { HonoMigrationRoute } from './report.js'

/**
 * The migration's figures as metrics, where the server has them: with
 * fastify-metrics (its prom-client, `fastify.metrics.client`) and with an
 * OpenTelemetry SDK's registered meter provider. Read from
 * `honoMigration()` when scraped or collected: nothing is done per request.
 * Labels carry the method and the route pattern, never a value of a request.
 * - `fastify_hono_migration_routes{state}`: routes by state;
 * - `fastify_hono_share_percent{method,route}`: each share;
 * - `fastify_hono_split_requests_total{method,route,side}`: where the router sent them;
 * - `fastify_hono_mirror_runs_total{method,route,result}`: compared, matched, mismatched, errored, skipped.
 */

interface Sample { name: string, help: string, kind: 'gauge' | 'counter', values: Array<[Record<string, string>, number]> }

const exported = new WeakSet<object>()

export function exportMetrics (fastify: FastifyInstance, report: () => HonoMigrationRoute[]): void {
  if (exported.has(fastify.server)) return
  exported.add(fastify.server)
  fastify.addHook('onReady', async () => {
    const samples = (): Sample[] => samplesOf(report())
    promClient(fastify, samples)
    openTelemetry(samples)
  })
}

function samplesOf (routes: HonoMigrationRoute[]): Sample[] {
  const states: Record<string, number> = { fastify: 0, hono: 0, both: 0 }
  const share: Sample = { name: 'fastify_hono_share_percent', help: 'Percent of a route\'s requests the router sends to the Hono twin', kind: 'gauge', values: [] }
  const split: Sample = { name: 'fastify_hono_split_requests_total', help: 'Requests of a route with a share, by the side that served them', kind: 'counter', values: [] }
  const mirror: Sample = { name: 'fastify_hono_mirror_runs_total', help: 'Mirrored requests of a route, by result', kind: 'counter', values: [] }
  for (const route of routes) {
    states[route.state]++
    const labels = { method: route.method, route: route.url }
    if (route.share !== undefined) {
      share.values.push([labels, route.share.percent])
      split.values.push([{ ...labels, side: 'hono' }, route.share.hono], [{ ...labels, side: 'fastify' }, route.share.fastify])
    }
    if (route.mirror !== undefined) {
      for (const result of ['compared', 'matched', 'mismatched', 'errored', 'skipped'] as const) mirror.values.push([{ ...labels, result }, route.mirror[result]])
    }
  }
  return [
    { name: 'fastify_hono_migration_routes', help: 'Routes of the server by migration state', kind: 'gauge', values: Object.entries(states).map(([state, count]) => [{ state }, count]) },
    share, split, mirror
  ]
}

interface PromMetric { reset (): void, set? (labels: Record<string, string>, value: number): void, inc? (labels: Record<string, string>, value: number): void }
interface PromClient {
  Gauge: new (config: object) => PromMetric
  Counter: new (config: object) => PromMetric
  register: { getSingleMetric (name: string): unknown, removeSingleMetric (name: string): void }
}

function promClient (fastify: FastifyInstance, samples: () => Sample[]): void {
  const client = (fastify as FastifyInstance & { metrics?: { client?: Partial<PromClient> } }).metrics?.client
  if (client?.Gauge === undefined || client.Counter === undefined || client.register === undefined) return
  const labelNames: Record<string, string[]> = {
    fastify_hono_migration_routes: ['state'],
    fastify_hono_share_percent: ['method', 'route'],
    fastify_hono_split_requests_total: ['method', 'route', 'side'],
    fastify_hono_mirror_runs_total: ['method', 'route', 'result']
  }
  for (const { name, help, kind } of samples()) {
    if (client.register.getSingleMetric(name) !== undefined) client.register.removeSingleMetric(name)
    const Metric = kind === 'gauge' ? client.Gauge : client.Counter
    // eslint-disable-next-line no-new
    new Metric({
      name,
      help,
      labelNames: labelNames[name],
      collect (this: PromMetric) {
        this.reset()
        const sample = samples().find((candidate) => candidate.name === name)
        for (const [labels, value] of sample?.values ?? []) {
          if (kind === 'gauge') this.set!(labels, value)
          else if (value > 0) this.inc!(labels, value)
        }
      }
    })
  }
}

function openTelemetry (samples: () => Sample[]): void {
  const meter = registeredMeter('fastify-hono')
  if (meter === undefined) return
  for (const { name, help, kind } of samples()) {
    const instrument = kind === 'gauge' ? meter.createObservableGauge(name, { description: help }) : meter.createObservableCounter(name, { description: help })
    instrument.addCallback((result) => {
      const sample = samples().find((candidate) => candidate.name === name)
      for (const [labels, value] of sample?.values ?? []) result.observe(value, labels)
    })
  }
}
