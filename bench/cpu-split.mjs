// User and system CPU per request, side by side: `node bench/cpu-split.mjs
// --base=<commit> [--cases=json,echo] [--rounds=6] [--window=2]
// [--connections=10]`. targets.mjs adds the two; this keeps them apart, so
// a difference in CPU time can be told apart from a difference in
// JavaScript (user time, which instructions.mjs counts) and one in the
// kernel (system time: system calls, which callgrind does not see). Each
// round measures every case on the plugin now and at `--base`, in
// alternating order. Prints the medians per request and now ÷ then.
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { BASE_VARIANT, buildBase } from './base.mjs'
import { startChild } from './proc.mjs'

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    cases: { type: 'string', default: 'json,echo' },
    rounds: { type: 'string', default: '6' },
    window: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' }
  }
})
if (args.base === undefined || args.base === '') throw new Error('--base needs a commit')
const rounds = Number(args.rounds)
const seconds = Number(args.window)
const connections = Number(args.connections)
const caseIds = args.cases.split(',')
const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const base = buildBase(args.base)

async function start (variantId) {
  const child = startChild(here('./server.mjs'), [variantId])
  const { port } = await child.call({ type: 'address' })
  return { id: variantId, port, call: (m) => child.call(m), stop: () => child.stop() }
}

const servers = [await start('fastify-hono'), await start(BASE_VARIANT)]
const load = startChild(here('./loader.mjs'), [])
const samples = new Map() // 'variant case' → [{ user, system }]
const median = (values) => { const s = [...values].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
try {
  for (const server of servers) {
    await load.call({ type: 'load', port: server.port, caseIds, connections, amount: 20000, maxSeconds: 120 })
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse()
    for (const caseId of caseIds) {
      for (const server of order) {
        await load.call({ type: 'load', port: server.port, caseId, connections, duration: 0.3 })
        const before = await server.call({ type: 'snapshot' })
        await load.call({ type: 'load', port: server.port, caseId, connections, duration: seconds })
        const after = await server.call({ type: 'snapshot' })
        const served = after.requests - before.requests
        const key = `${server.id} ${caseId}`
        samples.set(key, [...(samples.get(key) ?? []), {
          user: (after.cpu.user - before.cpu.user) / served,
          system: (after.cpu.system - before.cpu.system) / served
        }])
      }
    }
    console.log(`round ${round + 1}/${rounds}`)
  }
} finally {
  await load.stop()
  for (const server of servers) await server.stop()
  base.cleanup()
}
console.log(`\nNode ${process.versions.node}, ${rounds} rounds of ${seconds} s, ${connections} connections, against ${base.short}: µs per request, median`)
console.log('\n| case | user now | user then | ratio | system now | system then | ratio |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const caseId of caseIds) {
  const now = samples.get(`fastify-hono ${caseId}`)
  const then = samples.get(`${BASE_VARIANT} ${caseId}`)
  const u = [median(now.map((s) => s.user)), median(then.map((s) => s.user))]
  const y = [median(now.map((s) => s.system)), median(then.map((s) => s.system))]
  console.log(`| ${caseId} | ${u[0].toFixed(2)} | ${u[1].toFixed(2)} | ${(u[0] / u[1]).toFixed(3)}× | ${y[0].toFixed(2)} | ${y[1].toFixed(2)} | ${(y[0] / y[1]).toFixed(3)}× |`)
}
