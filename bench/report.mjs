// Renders a run's results as markdown tables, and the ratio chart.
// `node bench/report.mjs [results.json] [--detail]` prints the markdown for
// the project README from bench/results/latest.json (or the file given).
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderRatioChart } from './chart.mjs'
import { fixed, markdownTable, ratio, withRange } from './format.mjs'
import { spread, summarize } from './summary.mjs'

export function summaries (results) {
  // Each variant's own baseline where it names one (the stack variants: Fastify under the same stack).
  const baselines = new Map(results.meta.variants.map((v) => [v.id, v.baseline ?? results.meta.baseline]))
  const baseline = (variant) => baselines.get(variant) ?? results.meta.baseline
  return {
    http: summarize(results.http, { metrics: ['cpuPerRequest', 'rps', 'p99'], ratioMetric: 'cpuPerRequest', baseline }),
    pipeline: summarize(results.pipeline, { metrics: ['nsPerRequest'], ratioMetric: 'nsPerRequest', baseline })
  }
}

const labelOf = (list, id) => list.find((x) => x.id === id)?.label ?? id

/** Which cells to flag: a probe showed a wrong status or body, or the load saw errors. */
function flagsFor (results) {
  const flags = new Set()
  for (const check of results.checks ?? []) if (check.usable === false) flags.add(`${check.probe}\0${check.variant}`)
  for (const row of results.http) if (row.non2xx > 0 || row.errors > 0 || row.error) flags.add(`${row.caseId}\0${row.variant}`)
  return flags
}

function httpMatrix (results, summary) {
  const { variants, cases } = results.meta
  const flags = flagsFor(results)
  const header = ['variant', ...cases.map((c) => c.label)]
  const rows = variants.map((v) => [v.label, ...cases.map((c) => {
    const cell = summary[c.id]?.[v.id]
    if (cell === undefined) return '–'
    const flag = flags.has(`${c.id}\0${v.id}`) ? ' ⚠' : ''
    return `${ratio(cell.ratio.median)} (${fixed(cell.cpuPerRequest.median)})${flag}`
  })])
  return markdownTable(header, rows)
}

function httpDetail (results, summary) {
  const { variants, cases } = results.meta
  const header = ['case', 'variant', 'CPU µs/req', '× Fastify (stack: × Fastify, stack)', 'req/s', 'p99 ms']
  const rows = []
  for (const c of cases) {
    for (const v of variants) {
      const cell = summary[c.id]?.[v.id]
      if (cell === undefined) continue
      rows.push([c.label, v.label, withRange(cell.cpuPerRequest), withRange(cell.ratio, 2), fixed(cell.rps.median, 0), fixed(cell.p99.median, 0)])
    }
  }
  return markdownTable(header, rows, ['l', 'l', 'r', 'r', 'r', 'r'])
}

function pipelineTable (results, summary) {
  const { variants } = results.meta
  const pipelineCases = results.meta.pipelineCases ?? []
  const header = ['variant', ...pipelineCases.flatMap((id) => [`${id} ns/req`, '× Fastify'])]
  const rows = variants
    .filter((v) => pipelineCases.some((id) => summary[id]?.[v.id] !== undefined))
    .map((v) => [v.label, ...pipelineCases.flatMap((id) => {
      const cell = summary[id]?.[v.id]
      return cell === undefined ? ['–', '–'] : [withRange(cell.nsPerRequest, 0), ratio(cell.ratio.median)]
    })])
  return markdownTable(header, rows)
}

/**
 * What Hono's response copying costs each variant: the middleware case's CPU
 * per request over the param case's (the same route without middleware), in
 * the same round, median (min–max) over rounds. The project's target is
 * fastify-hono at 1.10× or less.
 */
function middlewareCost (results) {
  const byKey = new Map(results.http.map((row) => [`${row.round}\0${row.caseId}\0${row.variant}`, row]))
  const rounds = [...new Set(results.http.map((row) => row.round))]
  const rows = []
  for (const v of results.meta.variants) {
    const ratios = []
    for (const round of rounds) {
      const withMiddleware = byKey.get(`${round}\0middleware\0${v.id}`)
      const without = byKey.get(`${round}\0param\0${v.id}`)
      if (withMiddleware !== undefined && without !== undefined) ratios.push(withMiddleware.cpuPerRequest / without.cpuPerRequest)
    }
    if (ratios.length > 0) rows.push([v.label, withRange(spread(ratios), 2)])
  }
  return rows.length === 0 ? undefined : markdownTable(['variant', 'param + cors + header ÷ param route'], rows)
}

function checkList (results) {
  if ((results.checks ?? []).length === 0) return 'None in this run.'
  const lines = []
  for (const check of results.checks ?? []) {
    if (check.notes.length === 0) continue
    const against = check.against === undefined || check.against === 'node-server' ? '' : ` (against ${labelOf(results.meta.variants, check.against)})`
    lines.push(`- ${labelOf(results.meta.variants, check.variant)}, ${check.probe}${against}: ${check.notes.join('; ')}`)
  }
  return lines.length === 0 ? 'Every variant answered every probe like @hono/node-server.' : lines.join('\n')
}

/** The markdown report. `detail` adds per-cell ranges, req/s, p99 and the response checks. */
export function renderReport (results, { detail = false } = {}) {
  const { http, pipeline } = summaries(results)
  const m = results.meta
  const parts = [
    `Measured ${m.date.slice(0, 10)} on Node ${m.node}, ${m.cpus} × ${m.cpuModel}; fastify ${m.versions.fastify}, hono ${m.versions.hono}, @hono/node-server ${m.versions['@hono/node-server']}. ` +
      `${m.settings.rounds} interleaved round(s)${m.quick ? ' (quick run: indicative only)' : ''}, ${m.pinned ? 'server and load generator pinned to separate cores' : 'no CPU pinning'}.`
  ]
  // The 1-minute load average before the run: other work on the machine.
  if (m.loadAverageAtStart > m.cpus / 2) {
    parts[0] += ` **The machine was busy (load average ${m.loadAverageAtStart.toFixed(1)} on ${m.cpus} cores at the start): the figures are inflated and noisy.**`
  }
  if (results.http.length > 0) {
    parts.push(
      '**Server CPU time per request over HTTP**, relative to a plain Fastify route (median of the per-round ratios; lower is better); the production-stack rows (", stack", "Hono middleware") relative to the Fastify route under the same stack. In parentheses: median CPU µs per request.',
      httpMatrix(results, http)
    )
    if (detail) parts.push('Per case: median (min–max) over rounds.', httpDetail(results, http))
    const middleware = middlewareCost(results)
    if (middleware !== undefined) {
      parts.push('**What the middleware costs each variant:** the route behind `cors()` plus `c.header()` after `next()`, over the same route without middleware, in CPU per request within each round; median (min–max) over rounds.', middleware)
    }
  }
  if (results.pipeline.length > 0) {
    parts.push(
      '**In-process pipeline** (no socket I/O: dispatch, response creation, header serialization): CPU ns per request, best run in each process, median (min–max) over rounds.',
      pipelineTable(results, pipeline)
    )
  }
  if (detail) parts.push('**Response checks** (differences from @hono/node-server for the same request, or from the variant named; Date and Keep-Alive ignored, the x-ratelimit counters compared by name only):', checkList(results))
  return parts.join('\n\n') + '\n'
}

/** The SVG chart of the median ratios: one group per HTTP case, then the pipeline cases. */
export function renderChart (results) {
  const { http, pipeline } = summaries(results)
  const { variants, cases } = results.meta
  const groups = []
  for (const c of cases) {
    if (http[c.id] === undefined) continue
    // Only the variants that serve the case (the stack variants serve four).
    groups.push({ title: `HTTP: ${c.label}`, bars: variants.filter((v) => http[c.id][v.id] !== undefined).map((v) => ({ variant: v.id, ratio: http[c.id][v.id].ratio.median })) })
  }
  for (const id of results.meta.pipelineCases ?? []) {
    if (pipeline[id] === undefined) continue
    groups.push({
      title: `Pipeline (no sockets): ${labelOf(cases, id)}`,
      bars: variants.filter((v) => pipeline[id][v.id] !== undefined).map((v) => ({ variant: v.id, ratio: pipeline[id][v.id].ratio.median }))
    })
  }
  return renderRatioChart({
    title: 'Cost per request relative to a plain Fastify route (lower is better)',
    subtitle: `HTTP: server CPU per request; pipeline: CPU ns per request. Median of ${results.meta.settings.rounds} per-round ratio(s), Node ${results.meta.node}${results.meta.quick ? ', quick run' : ''}.`,
    groups,
    variants
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const file = args.find((a) => !a.startsWith('--')) ?? fileURLToPath(new URL('./results/latest.json', import.meta.url))
  process.stdout.write(renderReport(JSON.parse(readFileSync(file, 'utf8')), { detail: args.includes('--detail') }))
}
