import type { BindingName } from './bindings-use.js'

// What `fastify.honoMigration()` reports, and its printed form.

/** One route of the server, as `fastify.honoMigration()` lists it. */
export interface HonoMigrationRoute {
  method: string
  /** The path as clients see it (`/v2/users/:id`). */
  url: string
  /** Served by a Fastify route only, by a mounted Hono app only, or both (the Hono route a twin of the Fastify one). */
  state: 'fastify' | 'hono' | 'both'
  /** For a route with a share: the percent that goes to Hono, and how many requests went each way. */
  share?: { percent: number, sticky: string | undefined, hono: number, fastify: number }
  /** For a mirrored route: the counts, and each side's latency in ms (p50, p99 of the last 1,024). */
  mirror?: {
    sample: number
    compared: number
    matched: number
    mismatched: number
    errored: number
    skipped: number
    skippedBy: Record<string, number>
    lastMismatch: string[]
    latency: { fastify?: { p50: number, p99: number }, hono?: { p50: number, p99: number } }
  }
  /** For a Hono route on a mount with the `migration` option: the Fastify bindings it was seen to read (`c.env.request`, …): it cannot leave Fastify yet. */
  readsFastify?: BindingName[]
}

/** The list as a table, as `printRoutes()` prints the router. */
export function printMigration (routes: HonoMigrationRoute[]): string {
  const rows = [['method', 'url', 'state', 'share', 'mirror: compared matched mismatched errored skipped', 'reads Fastify']]
  for (const route of routes) {
    rows.push([
      route.method,
      route.url,
      route.state,
      route.share === undefined ? '' : `${route.share.percent}%${route.share.sticky === undefined ? '' : ` (${route.share.sticky})`}`,
      route.mirror === undefined ? '' : [route.mirror.compared, route.mirror.matched, route.mirror.mismatched, route.mirror.errored, route.mirror.skipped].join(' '),
      route.readsFastify?.join(', ') ?? ''
    ])
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()).join('\n') + '\n'
}
