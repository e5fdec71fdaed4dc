// Instructions per request, counted by valgrind's callgrind:
// `node bench/instructions.mjs [--groups=stack,echo] [--requests=3000]
// [--warmup=8000] [--repeats=2] [--connections=1] [--cache-sim]
// [--node-flags="--no-allocation-site-pretenuring"]`.
//
// targets.mjs measures CPU time, which on a shared two-core machine moves
// with everything else that runs there. An instruction count does not: the
// same server answering the same requests executes nearly the same
// instructions however busy the machine is. So this is the check that a
// ratio from targets.mjs is the code's and not the machine's, and, since
// callgrind attributes every instruction to a function, the place to see
// where a difference between two servers goes (garbage collection, the
// optimizing compiler, JavaScript, V8's builtins and inline caches, Node's
// C++ and the kernel interface).
//
// Each variant's server (server.mjs) runs under callgrind with
// instrumentation off while it starts and warms up (every case it serves,
// mixed), then, for each case: counters zeroed, `--requests` requests from
// the load generator, counters dumped. The server runs with V8's
// --single-threaded, so that the garbage collector's and the compiler's work
// happens on the thread callgrind counts rather than on helper threads (it
// is the same work; counted in one place, it is counted every time). One
// connection by default: with several, how many requests one turn of the
// event loop serves depends on timing, and with it the count.
//
// With --base=<commit>, the plugin as it was at that commit is counted too
// (base.mjs), and each A/B case gets a row, without and with the production
// stack (abTargets): fastify-hono now ÷ then.
//
// It needs valgrind (Debian's package) and takes about half a minute per
// cell. The figures are instructions, not time: a cache miss or a system
// call costs more than its instructions say. Read them beside targets.mjs,
// or with --cache-sim, which adds simulated cache misses and mispredicted
// branches and an estimate of cycles from them.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { abTargets, buildBase } from './base.mjs'
import { cases } from './cases.mjs'
import { functionAt, readPerfMap } from './perf-map.mjs'
import { parseNodeFlags, startChild } from './proc.mjs'
import { GROUPS, TARGETS } from './target-list.mjs'
import { serves, variantById } from './variants.mjs'

const { values: args } = parseArgs({
  options: {
    groups: { type: 'string', default: 'stack,echo' },
    requests: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '8000' },
    repeats: { type: 'string', default: '2' },
    connections: { type: 'string', default: '1' },
    functions: { type: 'string', default: '0' },
    base: { type: 'string' },
    targets: { type: 'string' },
    keep: { type: 'string' },
    'cache-sim': { type: 'boolean', default: false },
    'node-flags': { type: 'string' }
  }
})
const requests = Number(args.requests)
const warmup = Number(args.warmup)
const repeats = Number(args.repeats)
const connections = Number(args.connections)
const functions = Number(args.functions)
// --cache-sim: callgrind also simulates the caches and the branch predictor
// (about three times slower), and each cell gets its misses per request and
// an estimate of its cycles (see EVENTS).
const cacheSim = args['cache-sim']
// --node-flags="--no-allocation-site-pretenuring": V8 or Node flags for every server.
const nodeFlags = parseNodeFlags(args['node-flags'])
for (const [name, value, min] of [['functions', functions, 0], ['requests', requests, 100], ['warmup', warmup, 0], ['repeats', repeats, 1], ['connections', connections, 1]]) {
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer of at least ${min}`)
}
const groupIds = args.groups.split(',')
for (const id of groupIds) if (!GROUPS.includes(id)) throw new Error(`Unknown group "${id}" (known: ${GROUPS.join(', ')})`)
if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed (apt-get install valgrind)')

if (args.base === '') throw new Error('--base needs a commit')
// A/B, as targets.mjs --base= does: the plugin at that commit serves the same
// app in one more variant, and each case gets a row now ÷ then.
const base = args.base === undefined ? undefined : buildBase(args.base)
// --targets=<id,...>: only those targets (of the groups'); --keep=<dir>: the
// callgrind dumps and V8's perf maps are copied there, for callgrind_annotate.
const targetIds = args.targets?.split(',')
for (const id of targetIds ?? []) if (!TARGETS.some((t) => t.id === id)) throw new Error(`Unknown target "${id}"`)
const selected = TARGETS.filter((t) => groupIds.includes(t.group) && (targetIds === undefined || targetIds.includes(t.id)))
const targets = base === undefined
  ? selected
  : [...selected, ...abTargets(base)]
// Each variant with the cases the selected targets measure on it.
const casesByVariant = new Map()
for (const target of targets) {
  for (const [variant, caseId] of [target.over, target.under]) {
    const set = casesByVariant.get(variant) ?? new Set()
    set.add(caseId)
    casesByVariant.set(variant, set)
  }
}

/**
 * Where an instruction was spent, from the function's name in callgrind's
 * output: JavaScript compiled by V8 has no symbol (an address in no object
 * file), V8's builtins and inline caches are named Builtins_*, and the rest
 * is C++ named by namespace.
 */
const KINDS = [
  ['gc', /v8::internal::(Heap|Scaveng|MarkCompact|MinorMark|Sweep|Marking|Evacuat|MemoryAllocator|PagedSpace|NewSpace|SemiSpace|LargeObjectSpace|GCTracer|ConcurrentMarking|IncrementalMarking|MemoryReducer|ArrayBufferSweeper)|Scavenger|MarkingVisitor|Evacuator/],
  ['compiler', /v8::internal::(compiler::|maglev::|baseline::|turboshaft::|interpreter::|Compiler|Parser|Scanner|Bytecode|Zone|OptimizingCompile)|Maglev|Turbofan|Turboshaft/],
  ['js', /^0x[0-9a-f]+$/],
  // Ignition's bytecode handlers: JavaScript not (yet) compiled.
  ['interpreter', /^Builtins_.*Handler(_Wide|_ExtraWide)?$/],
  ['builtins', /^Builtins_/],
  ['node', /(^|[^:])(node::|uv_|uv__|llhttp_|napi_)/],
  ['system', /\[.*(libc|libpthread|ld-linux|libm|libstdc)[^\]]*\]|^(epoll|write|writev|read|send|recv|syscall|mem|str)/],
  ['v8 runtime', /./]
]

function kindOf (name, object) {
  for (const [kind, pattern] of KINDS) {
    if (kind === 'system' ? pattern.test(`${name} [${object}]`) : pattern.test(name)) return kind
  }
  return 'v8 runtime'
}

/**
 * With --cache-sim, the events callgrind counts besides instructions (Ir):
 * first-level instruction and data cache misses (I1mr, D1mr, D1mw), misses of
 * the level below (ILmr, DLmr, DLmw) and mispredicted branches, conditional
 * and indirect (Bcm, Bim). The caches simulated are this machine's per-core
 * ones (`CACHES`: 32 KiB first-level caches, and the 1 MiB second level as
 * callgrind's "last level", since a process that outgrows it pays for the
 * shared third level). The cycle estimate counts a cycle per instruction and
 * these cores' latencies for the rest: about 12 cycles for a first-level
 * miss or a mispredicted branch, about 50 for a second-level miss. A model,
 * not a measurement, but the same model for both sides of a ratio.
 */
const EVENTS = cacheSim ? ['Ir', 'I1mr', 'D1mr', 'D1mw', 'ILmr', 'DLmr', 'DLmw', 'Bcm', 'Bim'] : ['Ir']
const CACHES = ['--I1=32768,8,64', '--D1=32768,8,64', '--LL=1048576,8,64']
function estimatedCycles (e) {
  return e.Ir + 12 * (e.I1mr + e.D1mr + e.D1mw + e.Bcm + e.Bim) + 50 * (e.ILmr + e.DLmr + e.DLmw)
}

/**
 * The dump's instructions by kind, from callgrind_annotate's flat list of
 * functions, and with --cache-sim every event by kind (`eventsByKind`).
 */
function readDump (file) {
  const text = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', `--show=${EVENTS.join(',')}`, file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  const total = Number(/^([\d,]+) \S*\s*.*PROGRAM TOTALS/m.exec(text)?.[1].replaceAll(',', ''))
  const byKind = {}
  const eventsByKind = {}
  const js = new Map() // address of compiled JavaScript → instructions
  const jsEvents = new Map() // with --cache-sim: address of compiled JavaScript → its events, in EVENTS' order
  const named = new Map() // any other function → instructions
  // "  12,345 ( 1.23%)  678 ( 0.01%)  .  file:function [object]": one column per event, "." for none.
  const column = /^\s*(?:([\d,]+)(?: \(\s*[\d.]+%\))?|\.)(?=\s)/
  for (const line of text.split('\n')) {
    let rest = line
    const values = []
    for (let i = 0; i < EVENTS.length; i++) {
      const m = column.exec(rest)
      if (m === null) break
      values.push(m[1] === undefined ? 0 : Number(m[1].replaceAll(',', '')))
      rest = rest.slice(m[0].length)
    }
    if (values.length < EVENTS.length) continue
    const m = /^\s+[^:\s]*:(.*?)(?: \[(.*)\])?$/.exec(rest)
    if (m === null || m[1].trim() === '' || /PROGRAM TOTALS/.test(rest)) continue
    const name = m[1].trim()
    const kind = kindOf(name, m[2] ?? '')
    const count = values[0]
    byKind[kind] = (byKind[kind] ?? 0) + count
    const events = (eventsByKind[kind] ??= Object.fromEntries(EVENTS.map((e) => [e, 0])))
    for (let i = 0; i < EVENTS.length; i++) events[EVENTS[i]] += values[i]
    if (kind === 'js') {
      js.set(parseInt(name, 16), count)
      if (cacheSim) jsEvents.set(parseInt(name, 16), values)
    } else {
      named.set(name, (named.get(name) ?? 0) + count)
    }
  }
  return { total, byKind, eventsByKind, js, jsEvents, named }
}

/** Each event per request: over all kinds, without the compiler's (steady), and without the garbage collector's either (code). */
function perRequestEvents (eventsByKind, served) {
  const all = Object.fromEntries(EVENTS.map((e) => [e, 0]))
  const steady = Object.fromEntries(EVENTS.map((e) => [e, 0]))
  const code = Object.fromEntries(EVENTS.map((e) => [e, 0]))
  for (const [kind, events] of Object.entries(eventsByKind)) {
    for (const e of EVENTS) {
      all[e] += events[e] / served
      if (kind !== 'compiler') steady[e] += events[e] / served
      if (kind !== 'compiler' && kind !== 'gc') code[e] += events[e] / served
    }
  }
  return { all, steady, code }
}

const DIST = fileURLToPath(new URL('../dist/', import.meta.url))
const PACKAGES = [
  ['fastify-hono', { test: (name) => name.includes(DIST) || (base !== undefined && name.includes(base.dist)) }],
  ['@hono/node-server', /node_modules\/@hono\/node-server\//],
  ['hono', /node_modules\/hono\//],
  ['fastify', /node_modules\/(fastify|find-my-way|light-my-request|avvio|fast-json-stringify|@fastify\/(error|fast-json-stringify-compiler|ajv-compiler|proxy-addr))\//],
  ['fastify plugins', /node_modules\/(@fastify\/(cookie|compress|helmet|cors|rate-limit)|helmet|toad-cache|fastify-plugin)\//],
  ['pino', /node_modules\/(pino|abstract-logging)/],
  ['node', /node:|\(node:|internal\//],
  ['bench app', /\/bench\//],
  // Code V8 generates for regular expressions and its own stubs.
  ['regexp and stubs', /^(RegExp|Stub|Builtin|BytecodeHandler|Handler):/]
]

function packageOf (name) {
  if (name === undefined) return 'unnamed'
  for (const [pkg, pattern] of PACKAGES) if (pattern.test(name)) return pkg
  return /node_modules\//.test(name) ? 'other packages' : 'other'
}

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const work = mkdtempSync(join(os.tmpdir(), 'fastify-hono-callgrind-'))
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

/** One variant's server under callgrind: warmed up, then each case counted. Returns case → { perRequest, byKind }. */
async function countVariant (variantId, caseIds, load, repeat) {
  const out = join(work, `${variantId}.${repeat}`)
  const child = spawn('valgrind', [
    '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`,
    ...(cacheSim ? ['--cache-sim=yes', '--branch-sim=yes', ...CACHES] : []),
    process.execPath, '--single-threaded', '--perf-basic-prof', ...nodeFlags, here('./server.mjs'), variantId
  ], { stdio: ['ignore', 'inherit', 'ignore', 'ipc'] })
  const pending = new Map()
  let nextId = 0
  child.on('message', (message) => { pending.get(message.id)?.(message); pending.delete(message.id) })
  const call = (message) => new Promise((resolve) => {
    const id = nextId++
    pending.set(id, resolve)
    child.send({ ...message, id })
  })
  const control = (...flags) => execFileSync('callgrind_control', [...flags, String(child.pid)], { stdio: 'ignore' })
  try {
    const { port } = await call({ type: 'address' })
    const variant = variantById(variantId)
    const all = cases.filter((c) => serves(variant, c.id)).map((c) => c.id)
    await load.call({ type: 'load', port, caseIds: all, connections, amount: warmup, maxSeconds: 600 }, 700_000)
    // Then each counted case on its own, in the order they are counted: the
    // first case after a mixed load otherwise carries the compiler's work
    // for all of them (a few hundred million instructions).
    for (const caseId of caseIds) {
      await load.call({ type: 'load', port, caseId, connections, amount: Math.min(2000, warmup), maxSeconds: 300 }, 400_000)
    }
    control('--instr=on')
    const counted = new Map()
    for (const caseId of caseIds) {
      // The first requests of a case after the others settle its inline caches.
      await load.call({ type: 'load', port, caseId, connections, amount: Math.min(1000, warmup), maxSeconds: 300 }, 400_000)
      control('--zero')
      const before = await call({ type: 'snapshot' })
      const result = await load.call({ type: 'load', port, caseId, connections, amount: requests, maxSeconds: 600 }, 700_000)
      const after = await call({ type: 'snapshot' })
      const dumped = readdirSync(work).filter((f) => f.startsWith(`${variantId}.${repeat}.`))
      control('--dump')
      const file = readdirSync(work).find((f) => f.startsWith(`${variantId}.${repeat}.`) && !dumped.includes(f))
      if (file === undefined) throw new Error(`${variantId} ${caseId}: callgrind wrote no dump`)
      if (args.keep !== undefined) {
        mkdirSync(args.keep, { recursive: true })
        copyFileSync(join(work, file), join(args.keep, `callgrind.${variantId}.${caseId}.${repeat}`))
        copyFileSync(`/tmp/perf-${child.pid}.map`, join(args.keep, `perf.${variantId}.${caseId}.${repeat}.map`))
      }
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${variantId} ${caseId}: ${result.non2xx} non-2xx responses, ${result.errors} errors`)
      const served = after.requests - before.requests
      const { total, byKind, eventsByKind, js, jsEvents, named } = readDump(join(work, file))
      const ranges = readPerfMap(child.pid)
      const byPackage = {}
      // With --cache-sim: estimated cycles per request by where they were
      // spent, compiled JavaScript by package and the rest by kind.
      const cyclesByPlace = {}
      for (const [kind, events] of Object.entries(eventsByKind)) if (kind !== 'js') cyclesByPlace[kind] = estimatedCycles(events) / served
      for (const [address, n] of js) {
        const name = functionAt(ranges, address)
        const pkg = packageOf(name)
        byPackage[pkg] = (byPackage[pkg] ?? 0) + n / served
        if (cacheSim) {
          const values = jsEvents.get(address)
          const events = Object.fromEntries(EVENTS.map((e, i) => [e, values[i]]))
          cyclesByPlace[`js: ${pkg}`] = (cyclesByPlace[`js: ${pkg}`] ?? 0) + estimatedCycles(events) / served
        }
        // Compiled code's names carry V8's tier and the file; the same function may have several code objects.
        if (functions > 0) {
          let key = `js ${(name ?? 'unnamed').replace(/^(JS|LazyCompile):[*~^+]?/, '').replace(DIST, 'dist/')}`
          if (base !== undefined) key = key.replace(base.dist + '/', 'dist/')
          named.set(key, (named.get(key) ?? 0) + n)
        }
      }
      counted.set(caseId, {
        perRequest: total / served,
        byKind: Object.fromEntries(Object.entries(byKind).map(([kind, n]) => [kind, n / served])),
        jsByPackage: byPackage,
        ...(cacheSim && { events: perRequestEvents(eventsByKind, served), cyclesByPlace }),
        ...(functions > 0 && { byFunction: Object.fromEntries([...named].map(([name, n]) => [name, n / served]).filter(([, n]) => n >= 1)) })
      })
    }
    return counted
  } finally {
    child.kill('SIGKILL')
    rmSync(`/tmp/perf-${child.pid}.map`, { force: true })
  }
}

const started = Date.now()
const load = startChild(here('./loader.mjs'), [])
const counts = new Map() // 'variant case' → [{ perRequest, byKind }] per repeat
try {
  for (let repeat = 0; repeat < repeats; repeat++) {
    // Alternate the order, so no variant is always counted first.
    const order = [...casesByVariant.keys()]
    if (repeat % 2 === 1) order.reverse()
    for (const variantId of order) {
      const counted = await countVariant(variantId, [...casesByVariant.get(variantId)], load, repeat)
      for (const [caseId, value] of counted) {
        const key = `${variantId} ${caseId}`
        counts.set(key, [...(counts.get(key) ?? []), value])
        console.log(`repeat ${repeat + 1}/${repeats} ${key}: ${Math.round(value.perRequest).toLocaleString('en')} instructions per request (${((Date.now() - started) / 1000).toFixed(0)} s)`)
      }
    }
  }
} finally {
  await load.stop()
  base?.cleanup()
}

const kinds = KINDS.map(([kind]) => kind)
const fmt = (n) => Math.round(n).toLocaleString('en')
const against = base === undefined ? '' : `, A/B against ${base.short} (${args.base})`
console.log(`\nNode ${process.versions.node}, ${requests} requests per cell after ${warmup} warm-up requests, ${connections} connection(s), ${repeats} repeat(s)${against}${nodeFlags.length === 0 ? '' : `, servers run with ${nodeFlags.join(' ')}`}, ${((Date.now() - started) / 1000).toFixed(0)} s`)
// What a server that has stopped compiling would execute: the optimizing
// compiler's work still goes on after thousands of requests, in bursts that
// fall in one window or another.
const withoutCompiler = (count) => count.perRequest - (count.byKind.compiler ?? 0)
console.log('\n| group | target | ratio per repeat | without the compiler | bound |\n| --- | --- | --- | --- | ---: |')
const results = targets.map((target) => {
  const over = counts.get(target.over.join(' '))
  const under = counts.get(target.under.join(' '))
  const ratios = over.map((o, i) => o.perRequest / under[i].perRequest)
  const steady = over.map((o, i) => withoutCompiler(o) / withoutCompiler(under[i]))
  const bound = target.max !== undefined ? `≤ ${target.max.toFixed(2)}×` : target.min !== undefined ? `≥ ${target.min.toFixed(2)}×` : '—'
  console.log(`| ${target.group} | ${target.label} | ${ratios.map((r) => `${r.toFixed(3)}×`).join(', ')} | ${steady.map((r) => `${r.toFixed(3)}×`).join(', ')} | ${bound} |`)
  return { ...target, ratios, steady }
})
if (cacheSim) {
  // The same targets by the cycle estimate, and each cell's misses, without the compiler's share.
  console.log('\nWith the caches and the branch predictor simulated, without the compiler (estimated cycles: Ir + 12 × first-level misses and mispredicted branches + 50 × second-level misses)')
  console.log('\n| group | target | instructions, per repeat | estimated cycles, per repeat | without the garbage collector too: instructions | estimated cycles |\n| --- | --- | --- | --- | --- | --- |')
  const ratios = (over, under, view, measure) => over.map((o, i) => `${(measure(o.events[view]) / measure(under[i].events[view])).toFixed(3)}×`).join(', ')
  for (const target of results) {
    const over = counts.get(target.over.join(' '))
    const under = counts.get(target.under.join(' '))
    const ir = (e) => e.Ir
    console.log(`| ${target.group} | ${target.label} | ${ratios(over, under, 'steady', ir)} | ${ratios(over, under, 'steady', estimatedCycles)} | ${ratios(over, under, 'code', ir)} | ${ratios(over, under, 'code', estimatedCycles)} |`)
  }
  // Where each target's difference in estimated cycles lies (first repeat).
  for (const target of results) {
    const over = counts.get(target.over.join(' '))[0]
    const under = counts.get(target.under.join(' '))[0]
    const places = [...new Set([...Object.keys(over.cyclesByPlace), ...Object.keys(under.cyclesByPlace)])].filter((p) => p !== 'compiler')
    const rows = places.map((place) => [place, (over.cyclesByPlace[place] ?? 0) - (under.cyclesByPlace[place] ?? 0)]).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
    console.log(`\n${target.label}: estimated cycles per request, ${target.over.join(' ')} − ${target.under.join(' ')}, by place (first repeat, without the compiler): ${rows.map(([place, d]) => `${place} ${d > 0 ? '+' : ''}${fmt(d)}`).join(', ')}`)
  }
  console.log('\nPer request, first repeat, without the compiler: instructions, first-level misses (instructions; data read and written), second-level misses, mispredicted branches (conditional; indirect), estimated cycles\n')
  console.log('| cell | Ir | I1 misses | D1 misses | L2 misses | Bc mispredicted | Bi mispredicted | estimated cycles |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [key, values] of counts) {
    const e = values[0].events.steady
    console.log(`| ${key} | ${fmt(e.Ir)} | ${fmt(e.I1mr)} | ${fmt(e.D1mr + e.D1mw)} | ${fmt(e.ILmr + e.DLmr + e.DLmw)} | ${fmt(e.Bcm)} | ${fmt(e.Bim)} | ${fmt(estimatedCycles(e))} |`)
  }
}
console.log(`\nInstructions per request, by kind (first repeat): ${kinds.join(' · ')}`)
console.log(`\n| cell | total | ${kinds.join(' | ')} |\n| --- | ---: | ${kinds.map(() => '---:').join(' | ')} |`)
for (const [key, values] of counts) {
  const first = values[0]
  console.log(`| ${key} | ${fmt(first.perRequest)} | ${kinds.map((k) => fmt(first.byKind[k] ?? 0)).join(' | ')} |`)
}
const packages = [...new Set([...counts.values()].flatMap((values) => Object.keys(values[0].jsByPackage)))]
console.log(`\nCompiled JavaScript's instructions per request, by package (first repeat; --perf-basic-prof names the code): ${packages.join(' · ')}`)
console.log(`\n| cell | ${packages.join(' | ')} |\n| --- | ${packages.map(() => '---:').join(' | ')} |`)
for (const [key, values] of counts) {
  console.log(`| ${key} | ${packages.map((pkg) => fmt(values[0].jsByPackage[pkg] ?? 0)).join(' | ')} |`)
}
if (functions > 0) {
  // Where two cells of a target differ, function by function (first repeat).
  for (const target of results) {
    const over = counts.get(target.over.join(' '))[0].byFunction
    const under = counts.get(target.under.join(' '))[0].byFunction
    const names = new Set([...Object.keys(over), ...Object.keys(under)])
    const diffs = [...names].map((name) => [name, (over[name] ?? 0) - (under[name] ?? 0)]).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, functions)
    console.log(`\n${target.label}: the ${functions} functions that differ most, instructions per request (${target.over.join(' ')} − ${target.under.join(' ')})`)
    for (const [name, d] of diffs) console.log(`${d > 0 ? '+' : ''}${fmt(d).padStart(8)}  ${fmt(over[name] ?? 0).padStart(8)}  ${name}`)
  }
}
const file = here(`./results/instructions-${new Date(started).toISOString().replace(/[:.]/g, '-')}.json`)
writeFileSync(file, JSON.stringify({ node: process.versions.node, groups: groupIds, base: base && { commit: args.base, sha: base.sha }, requests, warmup, repeats, connections, cacheSim, nodeFlags, results, counts: Object.fromEntries(counts) }, null, 2))
console.log(`Wrote ${file}`)
