// The project's CPU targets, measured by paired alternation:
// `node bench/targets.mjs [--iterations=20] [--window=0.3]`.
//
// bench/run.mjs starts fresh servers every round and measures each variant
// for 0.8 s in turn, so two cells compared by a ratio are seconds apart; on a
// shared machine whose speed drifts by tens of percent over seconds, that
// scatters the ratios by ±15%. Here every server stays up, the windows are
// short (0.3 s), and the variants a target compares are measured back to
// back, in rotating order, many times: each iteration gives one ratio per
// target, and the median over iterations is the figure (with the middle
// half of the iterations as its spread). The same server processes, load
// generator and CPU accounting as run.mjs.
//
// With --base=<commit>, the same run also compares the plugin as it is now
// with the plugin as it was at that commit (A/B): base.mjs builds that
// commit into a temporary worktree, a further server (fastify-hono-base)
// serves the same app with it, and one more row per case gives
// fastify-hono ÷ fastify-hono-base.
//
// With --groups=stack,echo (say), only the targets of those groups, and only
// the servers they need: `route`, `middleware`, `stack` (the production
// stack, stack.mjs) and `echo` (the POST JSON echo against @hono/node-server).
import { writeFileSync } from 'node:fs'
import { drawPerformanceChart } from './performance-chart.mjs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { abTargets, BASE_STACK_VARIANT, BASE_VARIANT, buildBase } from './base.mjs'
import { cases } from './cases.mjs'
import { compare, isUsable, probe, probes } from './check.mjs'
import { measureCell, quantile, summarizeCells } from './http.mjs'
import { parseNodeFlags, pinningCores, startChild } from './proc.mjs'
import { GROUPS, TARGETS } from './target-list.mjs'
import { referenceVariants } from './variants.mjs'

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '20' },
    window: { type: 'string', default: '0.3' },
    connections: { type: 'string', default: '10' },
    groups: { type: 'string' },
    base: { type: 'string' },
    'node-flags': { type: 'string' }
  }
})
const iterations = Number(args.iterations)
const windowSeconds = Number(args.window)
const connections = Number(args.connections)
if (!Number.isInteger(iterations) || iterations < 3) throw new Error(`--iterations must be an integer of at least 3, not ${args.iterations}`)
if (!(windowSeconds >= 0.1 && windowSeconds <= 5)) throw new Error(`--window must be 0.1 to 5 seconds, not ${args.window}`)
if (args.base === '') throw new Error('--base needs a commit')
// --node-flags="--no-flush-bytecode --trace-gc": V8 or Node flags for every
// server process (not the load generator), to test what a process's state
// does to the figures.
const nodeFlags = parseNodeFlags(args['node-flags'])
// --groups=stack,echo: only those targets (and only the servers they need).
const groupIds = args.groups === undefined ? GROUPS : args.groups.split(',')
for (const id of groupIds) if (!GROUPS.includes(id)) throw new Error(`Unknown group "${id}" (known: ${GROUPS.join(', ')})`)
const selected = TARGETS.filter((t) => groupIds.includes(t.group))
// The production stack's processes are where V8's pretenuring decisions
// were seen to move a process's cost by up to a third (bench/README.md).
if (groupIds.includes('stack') && !nodeFlags.includes('--no-allocation-site-pretenuring')) {
  console.log('! the stack servers run with V8\'s allocation-site pretenuring on: a process\'s own state can move the stack rows by up to a third (see the state table below, and bench/README.md); --node-flags=--no-allocation-site-pretenuring takes it out')
}

// A/B: the plugin at the base commit, built before any server starts (and
// its worktree removed when this process exits). One row per case, no bound.
const base = args.base === undefined ? undefined : buildBase(args.base)
const targets = base === undefined
  ? selected
  : [...selected, ...abTargets(base, (caseId) => cases.some((c) => c.id === caseId))]

/** The cells to measure: each [variant, case] once, grouped by case (a case's cells are measured back to back). */
function cellsByCase () {
  const byCase = new Map()
  for (const target of targets) {
    for (const [variant, caseId] of [target.over, target.under]) {
      const variants = byCase.get(caseId) ?? new Set()
      variants.add(variant)
      byCase.set(caseId, variants)
    }
  }
  return [...byCase].map(([caseId, variants]) => ({ caseId, variants: [...variants] }))
}

/** Measures one cell: a short settling load (new connections), then the window. */
async function measure (server, load, caseId) {
  const cell = await measureCell(server, load, caseId, { connections, warmup: 0.1, duration: windowSeconds })
  if (cell.non2xx > 0 || cell.errors > 0) throw new Error(`${caseId}: ${cell.non2xx} non-2xx responses, ${cell.errors} errors`)
  return cell
}

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const groups = cellsByCase()
const variantIds = [...new Set(groups.flatMap((g) => g.variants))]
const cores = pinningCores()
const started = Date.now()
const servers = new Map()
const load = startChild(here('./loader.mjs'), [], cores?.load)
try {
  for (const id of variantIds) {
    const handle = startChild(here('./server.mjs'), [id], cores?.server, nodeFlags)
    const { port } = await handle.call({ type: 'address' }, 30_000)
    servers.set(id, { ...handle, port })
  }
  // A reference variant stands in for fastify-hono on its cases only if it
  // answers them with the same bytes (a Hono upgrade could change c.json()'s
  // headers). The base commit may answer differently on purpose: that is
  // reported, since its ratio then compares different responses.
  for (const reference of referenceVariants.filter((v) => servers.has(v.id) && v.sameAs !== undefined && servers.has(v.sameAs))) {
    for (const p of probes.filter((p) => reference.cases.includes(p.caseId))) {
      const notes = compare(await probe(servers.get(reference.sameAs).port, p), await probe(servers.get(reference.id).port, p))
      if (notes.length === 0) continue
      const message = `${reference.id} answers ${p.id} differently from fastify-hono: ${notes.join('; ')}`
      if (reference.id !== BASE_VARIANT && reference.id !== BASE_STACK_VARIANT) throw new Error(message)
      console.log(`! ${message}`)
    }
  }
  // A stack target compares the same response under the same plugins: the
  // status and body must match, and every header but Content-Type's charset
  // (Fastify serializes JSON with "; charset=utf-8", Hono without).
  for (const target of targets.filter((t) => t.group === 'stack' && t.max !== undefined)) {
    const p = probes.find((p) => p.caseId === target.over[1])
    const expected = await probe(servers.get(target.under[0]).port, p)
    const actual = await probe(servers.get(target.over[0]).port, p)
    if (!isUsable(expected, actual)) throw new Error(`${target.over[0]} answers ${p.id} differently from ${target.under[0]}: ${compare(expected, actual).join('; ')}`)
    const notes = compare(expected, actual).filter((note) => !note.startsWith('content-type: application/json'))
    if (notes.length > 0) console.log(`! ${target.over[0]} ${p.id}, headers differ from ${target.under[0]}: ${notes.join('; ')}`)
  }
  // Warm-up: every case each server takes part in, mixed.
  for (const id of variantIds) {
    const caseIds = groups.filter((g) => g.variants.includes(id)).map((g) => g.caseId)
    await load.call({ type: 'load', port: servers.get(id).port, caseIds, connections, amount: 20_000, maxSeconds: 8 })
  }
  const cellsOf = new Map() // 'variant case' → its cells, one per iteration
  for (let i = 0; i < iterations; i++) {
    for (const { caseId, variants } of groups) {
      // A rotation alone keeps each variant right after the same neighbour:
      // every other iteration runs it backwards, so that each pair is
      // measured in both orders.
      const rotated = variants.map((_, k) => variants[(k + (i >> 1)) % variants.length])
      const order = i % 2 === 0 ? rotated : rotated.reverse()
      for (const variant of order) {
        const key = `${variant} ${caseId}`
        if (!cellsOf.has(key)) cellsOf.set(key, [])
        cellsOf.get(key).push(await measure(servers.get(variant), load, caseId))
      }
    }
    if ((i + 1) % 5 === 0 || i + 1 === iterations) console.log(`iteration ${i + 1}/${iterations} (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  }

  const results = targets.map((target) => {
    const over = cellsOf.get(target.over.join(' '))
    const under = cellsOf.get(target.under.join(' '))
    const ratios = over.map((cell, i) => cell.cpuPerRequest / under[i].cpuPerRequest).sort((a, b) => a - b)
    const median = quantile(ratios, 0.5)
    const met = target.max !== undefined ? median <= target.max : target.min !== undefined ? median >= target.min : undefined
    return { ...target, median, q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75), met }
  })
  const states = Object.fromEntries([...cellsOf].map(([key, cells]) => [key, summarizeCells(cells)]))

  const against = (base === undefined ? '' : `, A/B against ${base.short} (${args.base})`) + (args.groups === undefined ? '' : `, groups ${groupIds.join(', ')}`) + (nodeFlags.length === 0 ? '' : `, servers run with ${nodeFlags.join(' ')}`)
  console.log(`\nNode ${process.versions.node}, ${os.availableParallelism()} cores, ${iterations} iterations of ${windowSeconds} s windows, ${connections} connections${against}, ${((Date.now() - started) / 1000).toFixed(0)} s`)
  console.log('\n| group | target | median (middle half) | bound | met |\n| --- | --- | ---: | ---: | --- |')
  for (const r of results) {
    const bound = r.max !== undefined ? `≤ ${r.max.toFixed(2)}×` : r.min !== undefined ? `≥ ${r.min.toFixed(2)}×` : '—'
    const met = r.met === undefined ? '—' : r.met ? 'yes' : 'no'
    console.log(`| ${r.group} | ${r.label} | ${r.median.toFixed(3)}× (${r.q1.toFixed(3)}–${r.q3.toFixed(3)}) | ${bound} | ${met} |`)
  }
  console.log('\n| server, case | CPU µs per request (median) | user, system (medians) | requests/s (median) | scavenge µs per request | full collections per 10,000 requests | their µs per request |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [key, state] of Object.entries(states)) {
    console.log(`| ${key} | ${state.cpu.toFixed(1)} | ${state.user.toFixed(1)}, ${state.system.toFixed(1)} | ${state.rps.toFixed(0)} | ${state.scavengeMicros.toFixed(2)} | ${state.majorsPer10k.toFixed(1)} | ${state.majorMicros.toFixed(2)} |`)
  }
  const file = here(`./results/targets-${new Date(started).toISOString().replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify({ node: process.versions.node, groups: groupIds, base: base && { commit: args.base, sha: base.sha }, iterations, windowSeconds, connections, nodeFlags, results, states, samples: Object.fromEntries([...cellsOf].map(([key, cells]) => [key, cells.map((cell) => cell.cpuPerRequest)])) }, null, 2))
  console.log(`Wrote ${file}`)
  // The chart at the top of docs/performance.md, from a run of every group it needs.
  const drawn = drawPerformanceChart({ node: process.versions.node, iterations, windowSeconds, connections, nodeFlags, results }, new Date().toISOString().slice(0, 10))
  if (drawn !== undefined) console.log(`Drew ${drawn}`)
} finally {
  await Promise.all([load.stop(), ...[...servers.values()].map((s) => s.stop())])
  base?.cleanup()
}
