// A control for what CPU time measures on the machine at hand: `node
// bench/cpu-control.mjs [--blocks=3000] [--rounds=8] [--window=1]
// [--connections=10]`. Serves c.text()'s answer from a Fastify route under
// the production stack in three processes that differ only in extra
// JavaScript run per request, which makes no system call and allocates
// nothing: none; `loop`, one block of integer arithmetic run --blocks times
// (small code); `straight`, --blocks distinct blocks run once each (the same
// work spread over tens of kilobytes of code). Prints user and system CPU
// per request and, per round, each ÷ none. Where the kernel accounts CPU
// time by sampling at its timer tick (CONFIG_TICK_CPU_ACCOUNTING), user and
// system time are the process's exact run time split in the proportion of
// the ticks that found it in each mode, and extra user-space work can show
// as system time; this shows how much, and what a larger code footprint
// costs over the same work in a loop.
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { parseNodeFlags, pinningCores, serveParent, startChild } from './proc.mjs'

const { values: args } = parseArgs({
  options: {
    serve: { type: 'string' },
    blocks: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '8' },
    window: { type: 'string', default: '1' },
    connections: { type: 'string', default: '10' },
    'node-flags': { type: 'string', default: '--no-allocation-site-pretenuring' }
  }
})
const blocks = Number(args.blocks)
if (!Number.isInteger(blocks) || blocks < 1) throw new Error(`--blocks must be a positive integer, not ${args.blocks}`)
const MODES = ['none', 'loop', 'straight']

/** The extra work of a mode: x → x after `blocks` rounds of multiply, add, shift and xor. */
function extraWork (mode) {
  const constants = Array.from({ length: blocks }, (_, i) => [Math.imul(i, 0x9e3779b1) | 1, (i * 40503 + 7) | 0, (i % 13) + 1])
  if (mode === 'loop') {
    const flat = Int32Array.from(constants.flat())
    return function loop (a) {
      let x = a | 0
      for (let i = 0; i < flat.length; i += 3) { x = (Math.imul(x, flat[i]) + flat[i + 1]) | 0; x ^= x >>> flat[i + 2] }
      return x
    }
  }
  if (mode === 'straight') {
    // 50 blocks per function: TurboFan gives up on very large functions.
    const parts = []
    for (let start = 0; start < blocks; start += 50) {
      let body = 'let x = a | 0\n'
      for (const [m, d, s] of constants.slice(start, start + 50)) body += `x = (Math.imul(x, ${m}) + ${d}) | 0; x ^= x >>> ${s}\n`
      parts.push(new Function('a', body + 'return x')) // eslint-disable-line no-new-func
    }
    return function straight (a) {
      let x = a
      for (let i = 0; i < parts.length; i++) x = parts[i](x)
      return x
    }
  }
  return (x) => x
}

async function serve (mode) {
  const { default: Fastify } = await import('fastify')
  const { registerStack } = await import('./stack.mjs')
  const { PREFIX, TEXT } = await import('./payloads.mjs')
  const extra = extraWork(mode)
  let sink = 0
  let requests = 0
  const fastify = Fastify({ logger: false })
  await registerStack(fastify)
  fastify.addHook('onResponse', (request, reply, done) => { requests++; done() })
  fastify.get(`${PREFIX}/text`, (request, reply) => {
    sink = extra(sink + 1)
    reply.type('text/plain; charset=UTF-8').send(TEXT)
  })
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  globalThis.sink = () => sink // keeps the work observable
  serveParent((message) => {
    if (message.type === 'address') return { port: fastify.server.address().port }
    if (message.type === 'snapshot') return { cpu: process.cpuUsage(), requests }
    throw new Error(`unknown message ${message.type}`)
  }, 20 * 60_000)
}

async function measure () {
  const rounds = Number(args.rounds)
  const seconds = Number(args.window)
  const connections = Number(args.connections)
  const cores = pinningCores()
  const self = fileURLToPath(import.meta.url)
  const servers = []
  for (const mode of MODES) {
    const child = startChild(self, [`--serve=${mode}`, `--blocks=${blocks}`], cores?.server, parseNodeFlags(args['node-flags']))
    servers.push({ mode, child, port: (await child.call({ type: 'address' })).port })
  }
  const load = startChild(fileURLToPath(new URL('./loader.mjs', import.meta.url)), [], cores?.load)
  const samples = new Map(MODES.map((mode) => [mode, []]))
  try {
    for (const server of servers) await load.call({ type: 'load', port: server.port, caseId: 'text', connections, amount: 30000, maxSeconds: 120 })
    for (let round = 0; round < rounds; round++) {
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        await load.call({ type: 'load', port: server.port, caseId: 'text', connections, duration: 0.3 })
        const before = await server.child.call({ type: 'snapshot' })
        await load.call({ type: 'load', port: server.port, caseId: 'text', connections, duration: seconds })
        const after = await server.child.call({ type: 'snapshot' })
        const served = after.requests - before.requests
        samples.get(server.mode).push({ user: (after.cpu.user - before.cpu.user) / served, system: (after.cpu.system - before.cpu.system) / served })
      }
    }
  } finally {
    await load.stop()
    for (const server of servers) await server.child.stop()
  }
  const median = (values) => { const sorted = [...values].sort((a, b) => a - b); return sorted[Math.floor(sorted.length / 2)] }
  const none = samples.get('none')
  console.log(`Node ${process.versions.node}, ${blocks} blocks, ${rounds} rounds of ${seconds} s, ${connections} connections: µs per request, medians; ratios per round ÷ none\n`)
  console.log('| extra work | user | system | user ÷ none | system ÷ none | CPU ÷ none |\n| --- | ---: | ---: | ---: | ---: | ---: |')
  for (const [mode, list] of samples) {
    const ratio = (pick) => median(list.map((sample, i) => pick(sample) / pick(none[i]))).toFixed(3)
    console.log(`| ${mode} | ${median(list.map((s) => s.user)).toFixed(2)} | ${median(list.map((s) => s.system)).toFixed(2)} | ${ratio((s) => s.user)}× | ${ratio((s) => s.system)}× | ${ratio((s) => s.user + s.system)}× |`)
  }
}

if (args.serve !== undefined) {
  if (!MODES.includes(args.serve)) throw new Error(`--serve takes ${MODES.join(', ')}, not ${args.serve}`)
  await serve(args.serve)
} else {
  await measure()
}
