// Where a request's CPU time goes, by owner: `node bench/profile.mjs
// [--variants=fastify-hono] [--cases=param,middleware] [--seconds=5]`.
// Needs Linux `perf` (sampling the cpu-clock, so it works without hardware
// counters, in containers too). One server process per variant, started
// with --perf-basic-prof so that perf can name JavaScript frames, serves
// each case in turn under autocannon, with perf recording that process only.
// Every sample is charged to the innermost JavaScript frame's package
// (fastify, hono, this plugin, Node's own modules, ...), to the kernel when
// it was taken there, or to V8's garbage collector. The figures are µs per
// request, scaled to the CPU time the server itself counted, so the columns
// of two cases can be subtracted: that difference is what a ratio in the
// benchmark's tables is made of. A diagnostic: the ratios themselves come
// from bench/run.mjs. With --top=N, also the N functions with the most self
// time (and the largest differences between the first and last profile).
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { caseById } from './cases.mjs'
import { functionAt, readPerfMap } from './perf-map.mjs'
import { parseNodeFlags, pinningCores, startChild } from './proc.mjs'
import { variantById } from './variants.mjs'

const { values: args } = parseArgs({
  options: {
    variants: { type: 'string', default: 'fastify-hono' },
    cases: { type: 'string', default: 'param,middleware' },
    seconds: { type: 'string', default: '5' },
    frequency: { type: 'string', default: '2000' },
    top: { type: 'string', default: '0' },
    'node-flags': { type: 'string' }
  }
})
// --node-flags="--no-allocation-site-pretenuring": more flags for the server processes.
const nodeFlags = parseNodeFlags(args['node-flags'])
const variants = args.variants.split(',').map(variantById)
const cases = args.cases.split(',').map(caseById)
const seconds = Number(args.seconds)
const top = Number(args.top)
if (spawnSync('perf', ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.error('bench/profile.mjs needs Linux perf on the PATH')
  process.exit(2)
}

/**
 * Sample counts by owner, read from `perf script`: one stack per sample,
 * innermost frame first. Also by function (for --top): the innermost frame
 * (self time), and the innermost JavaScript frame (self time with the
 * builtins and runtime calls it made).
 */
function samplesByOwner (file, pid) {
  const out = spawnSync('perf', ['script', '-i', file, '-F', 'pid,ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 })
  const counts = new Map()
  const self = new Map()
  const js = new Map()
  const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1)
  const ranges = readPerfMap(pid)
  for (const block of out.stdout.split('\n\n')) {
    const lines = block.trim().split('\n')
    if (lines.length < 2 || Number(lines[0].trim()) !== pid) continue
    const frames = lines.slice(1).map((line) => frameName(line.trim(), ranges))
    const owner = ownerOf(frames)
    add(counts, owner)
    if (top > 0) {
      add(self, owner === 'kernel' ? 'kernel' : owner === 'V8 garbage collector' ? owner : shortName(frames[0]))
      const innermostJs = frames.find((frame) => frame.startsWith('JS:'))
      add(js, owner === 'kernel' || innermostJs === undefined ? `(${owner})` : shortName(innermostJs))
    }
  }
  return { counts, self, js }
}

/**
 * A frame of `perf script` (`<address> <symbol> (<object>)`) by name: for
 * JIT code, the newest entry of V8's perf map at that address, since perf
 * itself may name it after older code that once lived there.
 */
function frameName (line, ranges) {
  const m = /^([0-9a-f]+)\s+(.*)$/.exec(line)
  if (m === null) return line
  return functionAt(ranges, parseInt(m[1], 16)) ?? m[2]
}

/** A frame's name without the checkout's path and the JIT tier marks: `JS:*outgoingHeaders dist/reply/head.js:33:25`. */
function shortName (frame) {
  return frame.replace(/ \(.*\.so.*\)$/, '').replace(/(file:\/\/)?\/[^ ]*?\/(node_modules|dist|bench)\//, '$2/').replace(/^JS:[*~^+-]/, 'JS:')
}

// V8's collectors: a sample anywhere under them is garbage collection.
const GC = /v8::internal::(Heap::|Scavenger|MarkCompact|MinorMS|Sweeper|ConcurrentMarking|GCTracer)/
// What is user space: everything else perf names is the kernel's.
const USER = /^(JS:|Builtins_|Builtin:|RegExp|Stub:|BytecodeHandler:|v8::|node::|uv_|uv__|llhttp|std::|__GI_|__libc|_int_|malloc|free|cfree|operator|\[unknown\]|0x|epoll_pwait$|read$|write$)/

function ownerOf (frames) {
  if (frames.some((frame) => GC.test(frame))) return 'V8 garbage collector'
  if (!USER.test(frames[0])) return 'kernel'
  const js = frames.find((frame) => frame.startsWith('JS:'))
  if (js === undefined) {
    return frames.some((frame) => frame.includes('RunMicrotasks')) ? 'microtask queue (no JS frame)' : 'Node and V8, native'
  }
  const at = js.slice(js.indexOf(' ') + 1)
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(at)
  if (pkg !== null) return pkg[1]
  if (at.includes('/dist/')) return 'fastify-hono (dist/)'
  if (at.includes('/bench/')) return 'the benchmark app'
  if (at.startsWith('node:')) return 'Node JS: ' + /^node:(?:internal\/)?([a-z_]+)/.exec(at)?.[1]
  return 'other JavaScript'
}

/** The `top` functions by µs per request in any profile, from `samples` ('self' or 'js'), with the last profile minus the first. */
function reportFunctions (profiles, samples, title) {
  const perRequest = (p, name) => (p[samples].get(name) ?? 0) / p.total * p.cpuPerRequest
  const names = [...new Set(profiles.flatMap((p) => [...p[samples].keys()]))]
  const score = (name) => Math.max(...profiles.map((p) => perRequest(p, name)), Math.abs(perRequest(profiles.at(-1), name) - perRequest(profiles[0], name)) * 2)
  names.sort((a, b) => score(b) - score(a))
  console.log(`\n${title}: µs per request, the ${top} largest (or largest differences)`)
  console.log('| function | ' + profiles.map((p) => p.label).join(' | ') + (profiles.length > 1 ? ' | last - first |' : ' |'))
  console.log('| --- |' + ' ---: |'.repeat(profiles.length + (profiles.length > 1 ? 1 : 0)))
  for (const name of names.slice(0, top)) {
    const values = profiles.map((p) => perRequest(p, name))
    const delta = values.at(-1) - values[0]
    console.log(`| \`${name.replace(/\|/g, '\\|')}\` | ${values.map((v) => v.toFixed(2)).join(' | ')}${profiles.length > 1 ? ` | ${delta >= 0 ? '+' : ''}${delta.toFixed(2)}` : ''} |`)
  }
}

function report (profiles) {
  const owners = [...new Set(profiles.flatMap((p) => [...p.owners.keys()]))]
  // µs per request: each owner's share of the samples times the CPU the server counted.
  const perRequest = (p, owner) => {
    const total = [...p.owners.values()].reduce((a, b) => a + b, 0)
    return (p.owners.get(owner) ?? 0) / total * p.cpuPerRequest
  }
  const first = profiles[0]
  owners.sort((a, b) => perRequest(profiles.at(-1), b) - perRequest(profiles.at(-1), a))
  const width = Math.max(14, ...profiles.map((p) => p.label.length + 2))
  const cells = (values) => values.map((v) => v.padStart(width)).join('')
  console.log(`${variants.map((v) => v.label).join(', ')}, Node ${process.versions.node}: µs of server CPU per request (perf, ${args.frequency} Hz, ${seconds} s per case)`)
  console.log(''.padEnd(32) + cells(profiles.map((p) => p.label)) + (profiles.length > 1 ? cells(['last - first']) : ''))
  for (const owner of owners) {
    const values = profiles.map((p) => perRequest(p, owner))
    const delta = values.at(-1) - values[0]
    console.log(owner.padEnd(32) + cells(values.map((v) => v.toFixed(2))) + (profiles.length > 1 ? cells([(delta >= 0 ? '+' : '') + delta.toFixed(2)]) : ''))
  }
  console.log('total'.padEnd(32) + cells(profiles.map((p) => p.cpuPerRequest.toFixed(2))) +
    (profiles.length > 1 ? cells([`${(profiles.at(-1).cpuPerRequest / first.cpuPerRequest).toFixed(3)}x`]) : ''))
  console.log('requests'.padEnd(32) + cells(profiles.map((p) => String(p.requests))))
  if (top > 0) {
    reportFunctions(profiles, 'self', 'Self time by innermost frame (JavaScript, builtin, runtime or native)')
    reportFunctions(profiles, 'js', 'Self time by innermost JavaScript function, with the builtins and runtime calls it made')
  }
}

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const cores = pinningCores()
const dir = mkdtempSync(join(os.tmpdir(), 'fastify-hono-profile-'))
const load = startChild(here('./loader.mjs'), [], cores?.load)
try {
  const profiles = []
  for (const variant of variants) profiles.push(...await profileVariant(variant))
  report(profiles)
} finally {
  await load.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** Every case on one server process of `variant`, one perf recording per case. */
async function profileVariant (variant) {
  // --perf-basic-prof also turns on V8's log: keep it in the temporary folder, not the working directory.
  const flags = ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, `${variant.id}-v8.log`)}`, ...nodeFlags]
  const server = startChild(here('./server.mjs'), [variant.id], cores?.server, flags)
  const pid = server.child.pid // taskset execs node: the same process
  try {
    const { port } = await server.call({ type: 'address' }, 30_000)
    // Warm every case up first, so that none is profiled while still being optimized.
    await load.call({ type: 'load', port, caseIds: cases.map((c) => c.id), connections: 10, amount: 30_000, maxSeconds: 10 })
    const profiles = []
    for (const testCase of cases) {
      const file = join(dir, `${variant.id}-${testCase.id}.data`)
      const perf = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', args.frequency, '-g', '--no-inherit', '-p', String(pid), '-o', file], { stdio: 'ignore' })
      await new Promise((resolve) => setTimeout(resolve, 500)) // perf attaches
      const before = await server.call({ type: 'snapshot' })
      await load.call({ type: 'load', port, caseId: testCase.id, connections: 10, duration: seconds })
      const after = await server.call({ type: 'snapshot' })
      perf.kill('SIGINT')
      await new Promise((resolve) => perf.once('exit', resolve))
      const requests = after.requests - before.requests
      const cpu = (after.cpu.user - before.cpu.user) + (after.cpu.system - before.cpu.system)
      const label = variants.length > 1 ? `${variant.id}:${testCase.id}` : testCase.id
      const { counts, self, js } = samplesByOwner(file, pid)
      const total = [...counts.values()].reduce((a, b) => a + b, 0)
      profiles.push({ label, requests, cpuPerRequest: cpu / requests, owners: counts, self, js, total })
    }
    // Without the map, every JavaScript frame is an address and lands in 'Node and V8, native'.
    if (!existsSync(join(os.tmpdir(), `perf-${pid}.map`))) console.log(`(no perf map from the ${variant.id} server: JavaScript frames are unnamed)`)
    return profiles
  } finally {
    await server.stop()
    rmSync(join(os.tmpdir(), `perf-${pid}.map`), { force: true })
  }
}
