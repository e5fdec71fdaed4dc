// The WebSocket benchmark: server CPU per echoed message (and per
// connection) of fastify-hono mounting a Hono app with upgradeWebSocket,
// against @fastify/websocket and @hono/node-server, by paired alternation.
//
//   npm run build && node bench/ws.mjs [--rounds=12] [--window=0.3]
//
// Every server runs in its own process, pinned to one core, and stays up;
// the load generator (`ws` clients, ws-loader.mjs) runs on the other core.
// After a check that each server echoes correctly and a warm-up, each round
// measures every case on every server, the plugin before and after each of
// the others (in an order rotated by one each round): each cell a short
// settling loop, then a window whose server CPU time (process.cpuUsage(),
// reported by the server) is divided by the messages its echo handler
// answered. Each round gives one ratio per case and server (the plugin's
// two cells around it ÷ its cell), and ÷ the cheaper of @fastify/websocket
// and @hono/node-server; the figure is the median over rounds, with the
// range and the middle half.
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { wsCases, wsVariants } from './ws-app.mjs'
import { pinningCores, startChild } from './proc.mjs'

/** The bound on the plugin's CPU per message ÷ the cheaper of the compared servers. */
const BOUND = 1.05
const PLUGIN = 'fastify-hono'
const CONNECT = 'connect'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '12' },
    window: { type: 'string', default: '0.3' },
    connections: { type: 'string', default: '16' },
    depth: { type: 'string', default: '16' },
    concurrency: { type: 'string', default: '8' },
    cases: { type: 'string' },
    variants: { type: 'string' },
    'no-connect': { type: 'boolean', default: false }
  }
})
const rounds = Number(args.rounds)
const windowSeconds = Number(args.window)
const connections = Number(args.connections)
const depth = Number(args.depth)
const concurrency = Number(args.concurrency)
if (!Number.isInteger(rounds) || rounds < 3) throw new Error(`--rounds must be an integer of at least 3, not ${args.rounds}`)
if (!(windowSeconds >= 0.1 && windowSeconds <= 5)) throw new Error(`--window must be 0.1 to 5 seconds, not ${args.window}`)
for (const [name, value] of [['connections', connections], ['depth', depth], ['concurrency', concurrency]]) {
  if (!Number.isInteger(value) || value < 1 || value > 256) throw new Error(`--${name} must be an integer from 1 to 256, not ${args[name]}`)
}
const caseIds = args.cases?.split(',') ?? [...wsCases.map((c) => c.id), ...(args['no-connect'] ? [] : [CONNECT])]
for (const id of caseIds) {
  if (id !== CONNECT && !wsCases.some((c) => c.id === id)) throw new Error(`Unknown case "${id}" (known: ${[...wsCases.map((c) => c.id), CONNECT].join(', ')})`)
}
const variantIds = args.variants === undefined
  ? wsVariants.map((v) => v.id)
  : [...new Set([PLUGIN, ...wsVariants.filter((v) => v.compared).map((v) => v.id), ...args.variants.split(',')])]
const variants = variantIds.map((id) => {
  const variant = wsVariants.find((v) => v.id === id)
  if (variant === undefined) throw new Error(`Unknown variant "${id}" (known: ${wsVariants.map((v) => v.id).join(', ')})`)
  return variant
})
const compared = variants.filter((v) => v.compared).map((v) => v.id)

function quantile (sorted, q) {
  const at = (sorted.length - 1) * q
  const low = Math.floor(at)
  return sorted[low] + (sorted[Math.ceil(at)] - sorted[low]) * (at - low)
}

/** Median, middle half and range of a list of numbers. */
function spread (values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return { median: NaN, q1: NaN, q3: NaN, min: NaN, max: NaN, n: 0 }
  return { median: quantile(sorted, 0.5), q1: quantile(sorted, 0.25), q3: quantile(sorted, 0.75), min: sorted[0], max: sorted.at(-1), n: sorted.length }
}

const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' ')
const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const cores = pinningCores()
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`
const loadAtStart = loadAverage()

/**
 * Measures one cell: a settling loop, then the window between two snapshots
 * of the server. Returns the server's CPU µs per unit (an echoed message, or
 * a WebSocket opened and closed), the client's rate, and what went wrong.
 */
async function measure (server, load, caseId) {
  const connect = caseId === CONNECT
  const request = connect
    ? { type: 'churn', port: server.port, concurrency }
    : { type: 'echo', port: server.port, caseId, depth }
  await load.call({ ...request, duration: 0.1 })
  const before = await server.call({ type: 'snapshot' })
  const run = await load.call({ ...request, duration: windowSeconds })
  const after = await server.call({ type: 'snapshot' })
  const cpu = (after.cpu.user - before.cpu.user) + (after.cpu.system - before.cpu.system)
  const units = connect ? after.opened - before.opened : after.messages - before.messages
  const seen = connect ? run.closed : run.received
  const problems = []
  if (run.mismatches > 0) problems.push(`${run.mismatches} echoes of the wrong length or type`)
  if (run.failed > 0) problems.push(`${run.failed} WebSockets not opened`)
  if (units !== seen) problems.push(`the server counted ${units}, the client ${seen}`)
  return { cpuPerUnit: units > 0 ? cpu / units : NaN, rate: run.rate, units, problems }
}

const servers = new Map()
const load = startChild(here('./ws-loader.mjs'), [], cores?.load)
try {
  console.log(`Node ${process.versions.node}, ${os.availableParallelism()} cores, load average ${loadAtStart}; ${rounds} rounds of ${windowSeconds} s windows; ${connections} connections × ${depth} in flight; connect: ${concurrency} at a time${cores === null ? '; not pinned (no taskset)' : ''}`)
  for (const variant of variants) {
    const handle = startChild(here('./ws-server.mjs'), [variant.id], cores?.server)
    const { port } = await handle.call({ type: 'address' }, 30_000)
    servers.set(variant.id, { ...handle, port })
  }
  // The check: a server that does not echo correctly is not measured.
  for (const [id, server] of servers) {
    const { notes } = await load.call({ type: 'check', port: server.port })
    if (notes.length > 0) throw new Error(`${id} does not echo correctly: ${notes.join('; ')}`)
  }
  console.log(`Echo checks passed (${[...servers.keys()].join(', ')}); servers up after ${elapsed()}`)
  for (const server of servers.values()) await load.call({ type: 'open', port: server.port, connections })
  // Warm-up, counted in messages and connections: a cold server costs several
  // times more for its first ones, and the connect path takes thousands of
  // connections to settle (with 300, a server's cost per connection still
  // fell by half to two thirds over the run's first 2,000).
  for (const server of servers.values()) {
    for (const caseId of caseIds) {
      if (caseId === CONNECT) await load.call({ type: 'churn', port: server.port, concurrency, amount: 3000, maxSeconds: 10 })
      else await load.call({ type: 'echo', port: server.port, caseId, depth, amount: 30_000, maxSeconds: 6 })
    }
  }
  console.log(`Warmed up after ${elapsed()}`)

  // Per case and round, the plugin is measured before and after each other
  // server (P A P B P ...: the others in an order rotated by one each round),
  // and each other server's cell is compared with the mean of the two
  // plugin cells around it, which cancels a steady drift of the machine's
  // speed over the three windows.
  const others = variants.filter((v) => v.id !== PLUGIN).map((v) => v.id)
  const samples = new Map() // `${variant} ${case}` → the variant's cells
  const pairs = new Map() // `${variant} ${case}` → one { plugin, other } per round, CPU per unit
  const record = (map, key, value) => {
    if (!map.has(key)) map.set(key, [])
    map.get(key).push(value)
  }
  const measured = async (id, caseId, round) => {
    const cell = await measure(servers.get(id), load, caseId)
    if (cell.problems.length > 0) console.log(`! round ${round + 1} ${id} ${caseId}: ${cell.problems.join('; ')}`)
    record(samples, `${id} ${caseId}`, cell)
    return cell
  }
  for (let round = 0; round < rounds; round++) {
    const line = []
    for (const caseId of caseIds) {
      const order = others.map((_, k) => others[(k + round) % others.length])
      let before = await measured(PLUGIN, caseId, round)
      const ratios = {}
      for (const id of order) {
        const cell = await measured(id, caseId, round)
        const after = await measured(PLUGIN, caseId, round)
        const plugin = (before.cpuPerUnit + after.cpuPerUnit) / 2
        record(pairs, `${id} ${caseId}`, { plugin, other: cell.cpuPerUnit })
        ratios[id] = plugin / cell.cpuPerUnit
        before = after
      }
      line.push(`${caseId} ${others.map((id) => ratios[id].toFixed(2)).join('/')}`)
    }
    console.log(`round ${round + 1}/${rounds} (${elapsed()}, load ${os.loadavg()[0].toFixed(2)}) fastify-hono ÷ ${others.join('/')}: ${line.join(' · ')}`)
  }

  // Per round and case: the plugin ÷ each other server, and ÷ the cheaper of
  // the compared two (the larger of its two ratios).
  const results = caseIds.map((caseId) => {
    const roundRatios = (id) => pairs.get(`${id} ${caseId}`).map(({ plugin, other }) => plugin / other)
    const ratios = Object.fromEntries(others.map((id) => [id, spread(roundRatios(id))]))
    const comparedRatios = compared.map(roundRatios)
    const best = spread(comparedRatios[0].map((_, i) => Math.max(...comparedRatios.map((r) => r[i]))))
    const perVariant = Object.fromEntries(variants.map((v) => [v.id, {
      cpu: spread(samples.get(`${v.id} ${caseId}`).map((c) => c.cpuPerUnit)),
      rate: spread(samples.get(`${v.id} ${caseId}`).map((c) => c.rate))
    }]))
    return { caseId, best, ratios, perVariant, met: caseId === CONNECT ? undefined : best.median <= BOUND }
  })

  const x = (n) => `${n.toFixed(2)}×`
  const loadAtEnd = loadAverage()
  console.log(`\nNode ${process.versions.node}, ${rounds} rounds, ${elapsed()}; load average ${loadAtStart} at the start, ${loadAtEnd} at the end`)
  console.log('\nServer CPU µs per message (connect: per WebSocket opened and closed), median (min–max), and the client\'s rate per second, median:\n')
  console.log(`| case | ${variants.map((v) => v.id).join(' | ')} |\n| --- |${variants.map(() => ' ---: |').join('')}`)
  for (const r of results) {
    console.log(`| ${r.caseId} | ${variants.map((v) => {
      const { cpu, rate } = r.perVariant[v.id]
      return `${cpu.median.toFixed(2)} (${cpu.min.toFixed(2)}–${cpu.max.toFixed(2)}), ${Math.round(rate.median).toLocaleString('en-US')}/s`
    }).join(' | ')} |`)
  }
  const otherIds = others
  console.log(`\nfastify-hono's CPU per unit ÷ the others', within each round: median (min–max) [middle half]; bound ${x(BOUND)} against the cheaper of ${compared.join(' and ')}:\n`)
  console.log(`| case | ÷ cheaper of the two | met | ${otherIds.map((id) => `÷ ${id}`).join(' | ')} |\n| --- | ---: | --- |${otherIds.map(() => ' ---: |').join('')}`)
  const cell = (s) => `${x(s.median)} (${x(s.min)}–${x(s.max)}) [${x(s.q1)}–${x(s.q3)}]`
  for (const r of results) {
    const met = r.met === undefined ? '—' : r.met ? 'yes' : 'no'
    console.log(`| ${r.caseId} | ${cell(r.best)} | ${met} | ${otherIds.map((id) => cell(r.ratios[id])).join(' | ')} |`)
  }
  const file = here(`./results/ws-${new Date(started).toISOString().replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify({
    node: process.versions.node,
    settings: { rounds, windowSeconds, connections, depth, concurrency, cores },
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    results,
    samples: Object.fromEntries([...samples].map(([key, cells]) => [key, cells.map((c) => ({ cpuPerUnit: c.cpuPerUnit, rate: c.rate, units: c.units }))])),
    pairs: Object.fromEntries(pairs)
  }, null, 2))
  console.log(`\nWrote ${file}`)
} finally {
  await Promise.all([load.stop(), ...[...servers.values()].map((s) => s.stop())])
}
