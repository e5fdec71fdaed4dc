// How far apart processes of the same build sit: `node bench/twins.mjs
// [--variant=fastify-hono-stack] [--count=4] [--case=text] [--window=0.3]
// [--connections=10] [--iterations=20] [--idle=0] [--node-flags="..."]`.
//
// Starts `count` server processes of one variant, warms each up in turn as
// targets.mjs does (so the first one idles while the others warm), then
// measures them in rotation, one window each per iteration. Identical code:
// any difference between them is the process's state, which a ratio of two
// processes in targets.mjs would read as a difference of code. Per process:
// the median CPU µs per request (middle half), and what its heap did in the
// windows: scavenges per 1,000 requests, the main thread's GC time per
// request, and the young generation's size at the end. With --idle=N, every
// iteration waits N seconds between the processes' windows, as a process
// waits while targets.mjs measures the others.
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { measureCell, quantile, summarizeCells } from './http.mjs'
import { parseNodeFlags, pinningCores, startChild } from './proc.mjs'

const { values: args } = parseArgs({
  options: {
    variant: { type: 'string', default: 'fastify-hono-stack' },
    count: { type: 'string', default: '4' },
    case: { type: 'string', default: 'text' },
    window: { type: 'string', default: '0.3' },
    connections: { type: 'string', default: '10' },
    iterations: { type: 'string', default: '20' },
    idle: { type: 'string', default: '0' },
    'node-flags': { type: 'string' }
  }
})
const count = Number(args.count)
const iterations = Number(args.iterations)
const windowSeconds = Number(args.window)
const connections = Number(args.connections)
const idleSeconds = Number(args.idle)
if (!Number.isInteger(count) || count < 2) throw new Error(`--count must be an integer of at least 2, not ${args.count}`)
if (!Number.isInteger(iterations) || iterations < 3) throw new Error(`--iterations must be an integer of at least 3, not ${args.iterations}`)
if (!(windowSeconds >= 0.1 && windowSeconds <= 5)) throw new Error(`--window must be 0.1 to 5 seconds, not ${args.window}`)
if (!(idleSeconds >= 0 && idleSeconds <= 60)) throw new Error(`--idle must be 0 to 60 seconds, not ${args.idle}`)
const nodeFlags = parseNodeFlags(args['node-flags'])

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000))

const cores = pinningCores()
const started = Date.now()
const load = startChild(here('./loader.mjs'), [], cores?.load)
const servers = []
try {
  for (let i = 0; i < count; i++) {
    const handle = startChild(here('./server.mjs'), [args.variant], cores?.server, nodeFlags)
    const { port } = await handle.call({ type: 'address' }, 30_000)
    servers.push({ ...handle, port, cells: [] })
  }
  for (const server of servers) {
    await load.call({ type: 'load', port: server.port, caseIds: [args.case], connections, amount: 20_000, maxSeconds: 8 })
  }
  for (let i = 0; i < iterations; i++) {
    // Rotated, and every other iteration backwards, as in targets.mjs.
    const rotated = servers.map((_, k) => servers[(k + (i >> 1)) % servers.length])
    for (const server of i % 2 === 0 ? rotated : rotated.reverse()) {
      if (idleSeconds > 0) await sleep(idleSeconds)
      const cell = await measureCell(server, load, args.case, { connections, warmup: 0.1, duration: windowSeconds })
      if (cell.non2xx > 0 || cell.errors > 0) throw new Error(`${cell.non2xx} non-2xx responses, ${cell.errors} errors`)
      server.cells.push(cell)
    }
  }
  console.log(`Node ${process.versions.node}, ${os.availableParallelism()} cores, ${count} processes of ${args.variant}, case ${args.case}, ${iterations} iterations of ${windowSeconds} s windows, ${connections} connections${idleSeconds > 0 ? `, ${idleSeconds} s idle before each window` : ''}${nodeFlags.length > 0 ? `, servers run with ${nodeFlags.join(' ')}` : ''}, ${((Date.now() - started) / 1000).toFixed(0)} s\n`)
  console.log('| process | CPU µs per request, median (middle half) | first half → second half | scavenges per 1,000 requests | scavenge µs per request | full collections | their µs per request | young generation at the end |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  const medians = []
  servers.forEach((server, n) => {
    const values = server.cells.map((cell) => cell.cpuPerRequest)
    const sorted = [...values].sort((a, b) => a - b)
    const half = Math.floor(values.length / 2)
    const medianOf = (list) => quantile([...list].sort((a, b) => a - b), 0.5)
    const state = summarizeCells(server.cells)
    medians.push(state.cpu)
    console.log(`| ${n + 1} | ${state.cpu.toFixed(1)} (${quantile(sorted, 0.25).toFixed(1)}–${quantile(sorted, 0.75).toFixed(1)}) | ${medianOf(values.slice(0, half)).toFixed(1)} → ${medianOf(values.slice(half)).toFixed(1)} | ${state.scavengesPer1000.toFixed(1)} | ${state.scavengeMicros.toFixed(2)} | ${state.majors} | ${state.majorMicros.toFixed(2)} | ${(server.cells.at(-1).youngBytes / 2 ** 20).toFixed(1)} MB |`)
  })
  console.log(`\nslowest ÷ fastest process, medians: ${(Math.max(...medians) / Math.min(...medians)).toFixed(3)}×`)
} finally {
  await Promise.all([load.stop(), ...servers.map((s) => s.stop())])
}
