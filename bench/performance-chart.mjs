// The chart at the top of docs/performance.md: for each case, what the
// mounted route costs over its baseline (CPU per request, paired runs of
// targets.mjs), and that ratio split in two: Hono's share (the same Hono app
// run without the plugin) and the plugin's share (the mount over that).
// targets.mjs draws it after a run of every group; `node
// bench/performance-chart.mjs [bench/results/targets-….json]` draws it from
// a saved run (by default the newest one that has every target needed).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const CHART = fileURLToPath(new URL('../docs/performance.svg', import.meta.url))
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url))

/**
 * The cases, each as [the whole ratio, Hono's share, the plugin's share],
 * by target id (target-list.mjs). Alone: the plugin around a bare fetch()
 * that builds the same Responses (no Hono) is the plugin's share. Under the
 * production stack: the floor (a Fastify route that also runs the Hono app).
 * With middleware: the same ratio on @hono/node-server, where the plugin
 * does not run, beside the mount's. The echo: against @hono/node-server,
 * Fastify's route is the first share.
 */
export const CASES = [
  { title: 'c.text(), alone ÷ Fastify route', total: 'text-vs-fastify', shares: [['ratio', 'Hono (the rest)', 'hono'], ['text-bare', 'the plugin (around a bare fetch)', 'plugin']] },
  { title: 'c.json(), alone ÷ Fastify route', total: 'json-vs-fastify', shares: [['ratio', 'Hono (the rest)', 'hono'], ['json-bare', 'the plugin (around a bare fetch)', 'plugin']] },
  // Hono's middleware costs what it costs wherever it runs: its ratio where the plugin does not run beside it.
  { title: 'cors() + c.header() ÷ the route without', total: 'middleware', shares: [['middleware-node-server', 'the same on @hono/node-server', 'hono']] },
  { title: 'c.text() under the production stack', total: 'stack-text', shares: [['floor-text', 'Hono (the floor)', 'hono'], ['above-floor-text', 'the plugin (over the floor)', 'plugin']] },
  { title: 'c.json() under the production stack', total: 'stack-json', shares: [['floor-json', 'Hono (the floor)', 'hono'], ['above-floor-json', 'the plugin (over the floor)', 'plugin']] },
  { title: 'param route under the production stack', total: 'stack-param', shares: [['floor-param', 'Hono (the floor)', 'hono'], ['above-floor-param', 'the plugin (over the floor)', 'plugin']] },
  { title: 'mixed traffic under the production stack', total: 'stack-mixed', shares: [['floor-mixed', 'Hono (the floor)', 'hono'], ['above-floor-mixed', 'the plugin (over the floor)', 'plugin']] },
  { title: 'POST JSON echo ÷ @hono/node-server', total: 'echo-vs-node-server', shares: [['echo-fastify-vs-node-server', 'a Fastify route', 'fastify'], ['echo-vs-fastify', 'the mount over it', 'plugin']] }
]

/** The target ids a run needs for the chart. */
export function neededTargets () {
  return [...new Set(CASES.flatMap((c) => [c.total, ...c.shares.map(([id]) => id)]).filter((id) => id !== 'ratio'))]
}

function escape (text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/**
 * The bars of each case from a run's results ({ id, median, q1, q3 }), or
 * undefined if one is missing. A share given as 'ratio' is the whole ratio
 * over the other share.
 */
export function chartCases (results) {
  const byId = new Map(results.map((r) => [r.id, r]))
  const cases = []
  for (const c of CASES) {
    const total = byId.get(c.total)
    const measured = c.shares.map(([id]) => id === 'ratio' ? undefined : byId.get(id))
    if (total === undefined || measured.every((share) => share === undefined) || measured.filter((share) => share === undefined).length > 1) return undefined
    if (c.shares.some(([id], i) => id !== 'ratio' && measured[i] === undefined)) return undefined
    const known = measured.find((share) => share !== undefined)
    const shares = c.shares.map(([id, label, kind], i) => ({
      label,
      kind,
      ...(id === 'ratio' ? { median: total.median / known.median, q1: undefined, q3: undefined } : pick(measured[i]))
    }))
    cases.push({ title: c.title, bars: [{ label: 'the whole ratio', kind: 'total', ...pick(total) }, ...shares] })
  }
  return cases
}

function pick ({ median, q1, q3 }) {
  return { median, q1, q3 }
}

const COLORS = { total: '#4c72b0', hono: '#dd8452', plugin: '#55a868', fastify: '#8c8c8c' }

/** The SVG: a linear scale around 1.0, one row a bar, the middle half of the run as a whisker. */
export function renderPerformanceChart (cases, { node, date, iterations, windowSeconds, connections, nodeFlags = [] }) {
  const values = cases.flatMap((c) => c.bars.flatMap((b) => [b.median, b.q1, b.q3])).filter((v) => Number.isFinite(v))
  const low = Math.min(0.8, Math.floor(Math.min(...values) * 10) / 10)
  // Past 2× (Hono's middleware on @hono/node-server) a bar is cut at the edge, its value printed.
  const high = Math.min(2, Math.max(1.5, Math.ceil(Math.max(...values) * 10) / 10))
  const step = high - low <= 1 ? 0.1 : high - low <= 2 ? 0.25 : 0.5
  const LABEL = 250
  const PLOT = 460
  const VALUE = 60
  const BAR = 12
  const TOP = 84
  const x = (v) => LABEL + ((Math.min(v, high) - low) / (high - low)) * PLOT
  const height = TOP + cases.reduce((sum, c) => sum + 20 + c.bars.length * (BAR + 3) + 12, 0) + 34
  const width = LABEL + PLOT + VALUE + 10
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`]
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`)
  out.push('<text x="10" y="24" font-size="16" font-weight="600">CPU per request over the baseline, and its shares</text>')
  out.push(`<text x="10" y="44" fill="#555">${escape(`Median of ${iterations} paired iterations (${windowSeconds} s windows, ${connections} connections), Node ${node}${nodeFlags.length > 0 ? ` ${nodeFlags.join(' ')}` : ''}, ${date}; whiskers: the middle half.`)}</text>`)
  out.push(`<text x="10" y="62" fill="#555">${escape('A share is a ratio too: the whole ratio is their product. Left of 1.0 is cheaper.')}</text>`)
  const bottom = height - 30
  for (let tick = Math.ceil(low / step) * step; tick <= high + 1e-9; tick = Math.round((tick + step) * 100) / 100) {
    const one = Math.abs(tick - 1) < 1e-9
    out.push(`<line x1="${x(tick).toFixed(1)}" y1="${TOP - 6}" x2="${x(tick).toFixed(1)}" y2="${bottom}" stroke="${one ? '#000' : '#e5e5e5'}"${one ? ' stroke-dasharray="5,3"' : ''}/>`)
    out.push(`<text x="${x(tick).toFixed(1)}" y="${bottom + 16}" text-anchor="middle" fill="#555">${Number(tick.toFixed(2))}×</text>`)
  }
  let y = TOP
  for (const c of cases) {
    out.push(`<text x="10" y="${y + 14}" font-weight="600">${escape(c.title)}</text>`)
    y += 20
    for (const bar of c.bars) {
      const textY = y + BAR - 2
      out.push(`<text x="${LABEL - 8}" y="${textY}" text-anchor="end" fill="#333">${escape(bar.label)}</text>`)
      const from = Math.min(x(1), x(bar.median))
      const w = Math.max(1.5, Math.abs(x(bar.median) - x(1)))
      out.push(`<rect x="${from.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${BAR}" fill="${COLORS[bar.kind]}"><title>${escape(`${c.title}, ${bar.label}: ${bar.median.toFixed(3)}×`)}</title></rect>`)
      if (bar.median > high) out.push(`<text x="${(x(high) + 3).toFixed(1)}" y="${textY}" fill="${COLORS[bar.kind]}" font-weight="600">»</text>`)
      if (Number.isFinite(bar.q1) && Number.isFinite(bar.q3)) {
        out.push(`<line x1="${x(bar.q1).toFixed(1)}" y1="${y + BAR / 2}" x2="${x(bar.q3).toFixed(1)}" y2="${y + BAR / 2}" stroke="#222"/>`)
      }
      out.push(`<text x="${width - 10}" y="${textY}" text-anchor="end" fill="#333">${bar.median.toFixed(2)}×</text>`)
      y += BAR + 3
    }
    y += 12
  }
  out.push('</svg>')
  return out.join('\n') + '\n'
}

/** Draws docs/performance.svg from a run; returns the path, or undefined when the run lacks a target. */
export function drawPerformanceChart (run, date) {
  const cases = chartCases(run.results)
  if (cases === undefined) return undefined
  writeFileSync(CHART, renderPerformanceChart(cases, { node: run.node, date, iterations: run.iterations, windowSeconds: run.windowSeconds, connections: run.connections, nodeFlags: run.nodeFlags }))
  return CHART
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = process.argv[2] !== undefined
    ? [process.argv[2]]
    : readdirSync(RESULTS).filter((name) => /^targets-.*\.json$/.test(name)).sort().reverse().map((name) => RESULTS + name)
  for (const file of files) {
    const run = JSON.parse(readFileSync(file, 'utf8'))
    const date = /targets-(\d{4}-\d\d-\d\d)/.exec(file)?.[1] ?? ''
    const drawn = drawPerformanceChart(run, date)
    if (drawn !== undefined) {
      console.log(`Drew ${drawn} from ${file}`)
      process.exit(0)
    }
    if (process.argv[2] !== undefined) console.error(`${file} lacks a target the chart needs (${neededTargets().join(', ')})`)
  }
  console.error('No saved run has every target the chart needs: run node bench/targets.mjs')
  process.exit(1)
}
