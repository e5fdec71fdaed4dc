// The benchmark runner: `node bench/run.mjs [--quick] [--rounds=N]
// [--variants=a,b] [--cases=x,y] [--no-http] [--no-pipeline]`.
// Starts each variant's server in its own process on one core, drives it
// from autocannon on the other, interleaving the variants round by round,
// then runs the in-process pipeline benchmark, and writes bench/results/.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { caseById, cases as allCases } from './cases.mjs'
import { runHttp } from './http.mjs'
import { runPipeline } from './pipeline.mjs'
import { pinningCores } from './proc.mjs'
import { renderChart, renderReport } from './report.mjs'
import { BASELINE, serves, variantById, variants as allVariants } from './variants.mjs'

const SETTINGS = {
  // `duration`, `warmup`: seconds, per measured window and before each (0:
  // none). `initialWarmup`: every case mixed, once per server before the
  // rounds: a cold server costs 3-4× more per request for its first ~10k
  // requests (JIT). Counted in requests, so slow variants warm up as much as
  // fast ones, with a cap in seconds for a loaded machine.
  full: { rounds: 5, duration: 0.8, warmup: 0.2, initialWarmup: { requests: 15_000, maxSeconds: 6 }, freshServers: true, connections: 10, pipeline: { rounds: 5, requests: 6000, reps: 3, warmup: 10_000, cases: ['text', 'json'] } },
  quick: { rounds: 2, duration: 0.15, warmup: 0, initialWarmup: { requests: 4000, maxSeconds: 0.75 }, freshServers: false, connections: 10, pipeline: { rounds: 1, requests: 1000, reps: 2, warmup: 1500, cases: ['text', 'json'] } }
}

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    variants: { type: 'string' },
    cases: { type: 'string' },
    'no-http': { type: 'boolean', default: false },
    'no-pipeline': { type: 'boolean', default: false }
  }
})
const settings = structuredClone(args.quick ? SETTINGS.quick : SETTINGS.full)
if (args.rounds !== undefined) {
  const rounds = Number(args.rounds)
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) throw new Error(`--rounds must be an integer from 1 to 50, not ${args.rounds}`)
  settings.rounds = settings.pipeline.rounds = rounds
}
const variants = args.variants ? args.variants.split(',').map(variantById) : allVariants
const cases = args.cases ? args.cases.split(',').map(caseById) : allCases
if (!variants.some((v) => v.id === BASELINE)) variants.splice(1, 0, variantById(BASELINE))
// A variant's own baseline (the stack variants': Fastify under the same stack) runs with it.
for (const variant of [...variants]) {
  if (variant.baseline !== undefined && !variants.some((v) => v.id === variant.baseline)) variants.splice(variants.indexOf(variant), 0, variantById(variant.baseline))
}
settings.pipeline.cases = settings.pipeline.cases.filter((id) => cases.some((c) => c.id === id))

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`
const cores = pinningCores()
const cpuCount = os.availableParallelism() // before the runner pins itself to one core
// The runner mostly waits; keep it off the server's core too.
if (cores !== null) spawnSync('taskset', ['-a', '-p', '-c', String(cores.load), String(process.pid)], { stdio: 'ignore' })
const started = Date.now()
const log = (line) => process.stdout.write(line + '\n')

function versions () {
  // Not require('x/package.json'): hono's exports map does not list it.
  const version = (name) => JSON.parse(readFileSync(here(`../node_modules/${name}/package.json`), 'utf8')).version
  return Object.fromEntries(['fastify', 'hono', '@hono/node-server', 'autocannon'].map((n) => [n, version(n)]))
}

const results = {
  meta: {
    date: new Date().toISOString(),
    node: process.versions.node,
    cpus: cpuCount,
    cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown CPU',
    pinned: cores !== null,
    // Other busy processes inflate every figure: worth knowing when reading them.
    loadAverageAtStart: os.loadavg()[0],
    quick: args.quick,
    settings,
    baseline: BASELINE,
    versions: versions(),
    variants: variants.map(({ id, label, baseline }) => ({ id, label, baseline })),
    cases: cases.map(({ id, label }) => ({ id, label })),
    pipelineCases: args['no-pipeline'] ? [] : settings.pipeline.cases
  },
  checks: [],
  http: [],
  pipeline: []
}

log(`${variants.length} variants × ${cases.length} cases, ${settings.rounds} round(s)${cores ? ', pinned: server on core ' + cores.server + ', load on core ' + cores.load : ', not pinned'}`)
if (!args['no-http']) {
  const { rows, checks } = await runHttp({ variants, cases, settings, cores, log, elapsed })
  results.http = rows
  results.checks = checks
  log(`HTTP done after ${elapsed()}`)
}
if (!args['no-pipeline'] && settings.pipeline.cases.length > 0) {
  results.pipeline = await runPipeline({
    // Only the variants that serve every pipeline case (all but a few reference variants).
    variants: variants.filter((v) => settings.pipeline.cases.every((id) => serves(v, id))).map((v) => v.id),
    cases: settings.pipeline.cases,
    rounds: settings.pipeline.rounds,
    requests: settings.pipeline.requests,
    warmup: settings.pipeline.warmup,
    reps: settings.pipeline.reps,
    core: cores?.server,
    onRow: (row) => log(`pipeline round ${row.round + 1}/${settings.pipeline.rounds} ${row.caseId.padEnd(5)} ${row.variant.padEnd(20)} ${row.nsPerRequest.toFixed(0)} ns/req${row.failed ? ` (${row.failed} not 200)` : ''}`)
  })
}
results.meta.seconds = Math.round((Date.now() - started) / 1000)
results.meta.loadAverageAtEnd = os.loadavg()[0]

const dir = here('./results/')
mkdirSync(dir, { recursive: true })
const json = JSON.stringify(results, null, 2) + '\n'
const stamp = results.meta.date.replace(/[:.]/g, '-')
writeFileSync(`${dir}${stamp}${args.quick ? '-quick' : ''}.json`, json)
writeFileSync(`${dir}latest.json`, json)
writeFileSync(`${dir}ratios.svg`, renderChart(results))
log('\n' + renderReport(results, { detail: true }))
log(`Took ${results.meta.seconds} s. Wrote bench/results/${stamp}${args.quick ? '-quick' : ''}.json, latest.json and ratios.svg.`)
