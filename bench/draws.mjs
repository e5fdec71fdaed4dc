// How a variant's cost varies from one server process to the next:
// `node bench/draws.mjs --variant=fastify-hono-stack --case=text --processes=8`.
// Each process is started, warmed up on every case the variant serves, then
// measured on one case in `--windows` windows; one line per process with
// its median CPU µs per request. A process that settles into a slower state
// for its whole life (a V8 cliff) shows up as a second cluster.
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { measureCell } from './http.mjs'
import { parseNodeFlags, pinningCores, startChild } from './proc.mjs'
import { cases } from './cases.mjs'
import { serves, variantById } from './variants.mjs'
import { buildBase } from './base.mjs'

const { values: args } = parseArgs({
  options: {
    variant: { type: 'string', default: 'fastify-hono-stack' },
    case: { type: 'string', default: 'text' },
    processes: { type: 'string', default: '8' },
    windows: { type: 'string', default: '8' },
    window: { type: 'string', default: '0.5' },
    warmup: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '10' },
    base: { type: 'string' },
    'node-flags': { type: 'string' }
  }
})
// --node-flags="--no-allocation-site-pretenuring": flags for every server process.
const nodeFlags = parseNodeFlags(args['node-flags'])
if (args.base !== undefined) buildBase(args.base)
const variantIds = args.variant.split(',')
const cores = pinningCores()
const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const loader = startChild(here('./loader.mjs'), [], cores?.load)
const settings = { connections: Number(args.connections), duration: Number(args.window), warmup: 0 }
try {
  for (let p = 0; p < Number(args.processes); p++) {
    for (const id of variantIds) {
      const variant = variantById(id)
      const server = startChild(here('./server.mjs'), [id], cores?.server, nodeFlags)
      try {
        const { port } = await server.call({ type: 'address' })
        const caseIds = cases.filter((c) => serves(variant, c.id) && c.id !== 'sse' && c.id !== 'big').map((c) => c.id)
        await loader.call({ type: 'load', port, caseIds, connections: settings.connections, amount: Number(args.warmup), maxSeconds: 120 }, 180_000)
        const samples = []
        let rss = 0
        for (let w = 0; w < Number(args.windows); w++) {
          const cell = await measureCell({ ...server, port }, loader, args.case, settings)
          samples.push(cell.cpuPerRequest)
          rss = cell.rss
        }
        samples.sort((a, b) => a - b)
        console.log(`process ${p + 1} ${id} ${args.case}: median ${samples[samples.length >> 1].toFixed(1)} µs (${samples.map((s) => s.toFixed(1)).join(' ')}), RSS ${(rss / 1048576).toFixed(0)} MB`)
      } finally {
        await server.stop()
      }
    }
  }
} finally {
  await loader.stop()
}
