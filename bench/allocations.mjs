// Bytes allocated per request, by package and by place, for servers side by
// side: `node bench/allocations.mjs [--variants=fastify-stack,fastify-hono-stack]
// [--cases=text,json,param,mixed,echo] [--requests=20000] [--warmup=20000]
// [--interval=8192] [--connections=10] [--top=12] [--package=fastify-hono]`.
//
// Garbage collection is paid per byte allocated, and it is missing from an
// instruction count (instructions.mjs): this is where a difference in it
// comes from. Each variant's server (alloc-server.mjs) warms up on every
// case mixed, then for each case runs V8's sampling heap profiler over
// `--requests` requests from the load generator (loader.mjs), objects that
// were already collected included. The profiler samples one allocation in
// about `--interval` bytes and scales each sample up, so a place's figure is
// an estimate; the totals agree with a --trace-gc count within a few per
// cent at these sample counts. Bytes, not time: a scavenge costs by what
// survives it, not by what it frees.
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { STACK_CASES } from './cases.mjs'
import { pinningCores, startChild } from './proc.mjs'
import { variantById } from './variants.mjs'

const { values: args } = parseArgs({
  options: {
    variants: { type: 'string', default: 'fastify-stack,fastify-hono-stack' },
    cases: { type: 'string', default: STACK_CASES.join(',') },
    requests: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '20000' },
    interval: { type: 'string', default: '8192' },
    connections: { type: 'string', default: '10' },
    top: { type: 'string', default: '12' },
    package: { type: 'string' }
  }
})
const variantIds = args.variants.split(',')
const caseIds = args.cases.split(',')
const requests = Number(args.requests)
const warmup = Number(args.warmup)
const interval = Number(args.interval)
const connections = Number(args.connections)
const top = Number(args.top)
for (const id of variantIds) variantById(id)

const serverScript = fileURLToPath(new URL('./alloc-server.mjs', import.meta.url))
const loaderScript = fileURLToPath(new URL('./loader.mjs', import.meta.url))
const cores = pinningCores()

console.log(`# Bytes allocated per request (${new Date().toISOString()}, Node ${process.versions.node})`)
console.log(`${requests} requests per case, ${connections} connections, one sample per ~${interval} bytes, after ${warmup} requests of every case mixed\n`)

const loader = startChild(loaderScript, [], cores?.load)
/** measured[caseId][variantId] = { perRequest, places: { place: bytes per request } } */
const measured = {}
try {
  for (const variantId of variantIds) {
    const server = startChild(serverScript, [variantId], cores?.server)
    try {
      const { port } = await server.call({ type: 'address' })
      const warm = await loader.call({ type: 'load', port, caseIds, connections, amount: warmup, maxSeconds: 120 }, 180_000)
      if (warm.non2xx > 0 || warm.errors > 0) throw new Error(`${variantId} warm-up: ${warm.non2xx} non-2xx, ${warm.errors} errors`)
      for (const caseId of caseIds) {
        await server.call({ type: 'start', interval })
        const load = await loader.call({ type: 'load', port, caseId, connections, amount: requests, maxSeconds: 120 }, 180_000)
        const { requests: served, places } = await server.call({ type: 'stop' }, 120_000)
        if (load.non2xx > 0 || load.errors > 0) throw new Error(`${variantId} ${caseId}: ${load.non2xx} non-2xx, ${load.errors} errors`)
        const perPlace = {}
        let total = 0
        for (const [place, bytes] of Object.entries(places)) {
          perPlace[place] = bytes / served
          total += bytes / served
        }
        measured[caseId] ??= {}
        measured[caseId][variantId] = { perRequest: total, places: perPlace }
        console.error(`${variantId} ${caseId}: ${(total / 1024).toFixed(1)} KB per request over ${served} requests`)
      }
    } finally {
      await server.stop()
    }
  }
} finally {
  await loader.stop()
}

for (const caseId of caseIds) {
  const byVariant = measured[caseId]
  console.log(`## ${caseId}\n`)
  console.log(`| | ${variantIds.join(' | ')} |`)
  console.log(`| --- | ${variantIds.map(() => '---:').join(' | ')} |`)
  console.log(`| **bytes per request** | ${variantIds.map((id) => `**${Math.round(byVariant[id].perRequest)}**`).join(' | ')} |`)
  const packages = new Set()
  for (const id of variantIds) for (const place of Object.keys(byVariant[id].places)) packages.add(packageOf(place))
  const packageBytes = (id, name) => Object.entries(byVariant[id].places).filter(([place]) => packageOf(place) === name).reduce((sum, [, bytes]) => sum + bytes, 0)
  const sortedPackages = [...packages].sort((a, b) => Math.max(...variantIds.map((id) => packageBytes(id, b))) - Math.max(...variantIds.map((id) => packageBytes(id, a))))
  for (const name of sortedPackages) console.log(`| ${name} | ${variantIds.map((id) => Math.round(packageBytes(id, name))).join(' | ')} |`)
  console.log('')
  // The places that differ most between the first variant and each other one.
  const first = variantIds[0]
  for (const other of variantIds.slice(1)) {
    const placesOf = new Set([...Object.keys(byVariant[first].places), ...Object.keys(byVariant[other].places)])
    const diffs = [...placesOf].map((place) => [place, (byVariant[other].places[place] ?? 0) - (byVariant[first].places[place] ?? 0)])
    diffs.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
    console.log(`${other} − ${first}, the ${top} places that differ most (bytes per request):\n`)
    console.log('| place | difference |')
    console.log('| --- | ---: |')
    for (const [place, diff] of diffs.slice(0, top)) console.log(`| \`${place}\` | ${diff > 0 ? '+' : ''}${Math.round(diff)} |`)
    console.log('')
  }
  // --package=<name>: each variant's places in that package, largest first.
  if (args.package !== undefined) {
    for (const id of variantIds) {
      const inPackage = Object.entries(byVariant[id].places).filter(([place]) => packageOf(place) === args.package).sort((a, b) => b[1] - a[1])
      if (inPackage.length === 0) continue
      console.log(`${id}, the places in ${args.package} (bytes per request):\n`)
      console.log('| place | bytes |')
      console.log('| --- | ---: |')
      for (const [place, bytes] of inPackage.slice(0, top)) console.log(`| \`${place}\` | ${Math.round(bytes)} |`)
      console.log('')
    }
  }
}

/** The package a place's file belongs to: `fastify`, `@fastify/helmet`, `fastify-hono`, `node`, `(native)`, `bench`. */
function packageOf (place) {
  const file = place.slice(place.lastIndexOf(' ') + 1)
  if (file.startsWith('(native)')) return '(native, builtins)'
  if (file.startsWith('node:')) return 'node'
  if (file.startsWith('bench/')) return 'bench (the app)'
  const parts = file.split('/')
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]
}
