// What mirroring does to the real request's latency: the Fastify twin of
// c.json() served without mirroring, mirrored on a 10% sample, and on every
// request (servers/fastify-twin*.mjs), each in its own process on the server core,
// measured in alternation at a fixed request rate well below saturation (a
// mirrored run takes CPU after the response; at saturation that CPU is
// throughput, not latency, and targets.mjs' migration group prices it).
//
//   node bench/mirror-latency.mjs [--rate=1000] [--connections=4] [--window=3] [--rounds=6]
//
// Each request is timed by its client (hrtime, from the send to the end of
// the body). Prints each server's latency quantiles (ms) per round, their
// medians, and each mirrored server's ratio to the one without.
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { quantile } from './http.mjs'
import { PREFIX } from './payloads.mjs'
import { pinningCores, startChild } from './proc.mjs'

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '4' },
    window: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '6' }
  }
})
const rate = Number(args.rate)
const connections = Number(args.connections)
const windowSeconds = Number(args.window)
const rounds = Number(args.rounds)
for (const [name, value] of [['rate', rate], ['connections', connections], ['window', windowSeconds], ['rounds', rounds]]) {
  if (!(value > 0)) throw new Error(`--${name} must be a positive number`)
}

const serverScript = fileURLToPath(new URL('./server.mjs', import.meta.url))
const cores = pinningCores()
const variants = ['fastify-twin', 'fastify-twin-mirror-10', 'fastify-twin-mirror']
const servers = new Map()
for (const id of variants) {
  const handle = startChild(serverScript, [id], cores?.server)
  const { port } = await handle.call({ type: 'address' }, 30_000)
  servers.set(id, { ...handle, port })
}

/**
 * Requests to the mirrored path at `perSecond` in all, spread over
 * `connections` keep-alive connections, each timed with hrtime from its send
 * to the end of its body; or as fast as each connection can go (no rate).
 */
async function load (port, seconds, perSecond) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const times = []
  const until = performance.now() + seconds * 1000
  const interval = perSecond === undefined ? 0 : (1000 * connections) / perSecond
  const one = () => new Promise((resolve, reject) => {
    const started = performance.now()
    http.get({ host: '127.0.0.1', port, path: `${PREFIX}/json`, agent }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`))
      response.resume()
      response.on('end', () => { times.push(performance.now() - started); resolve() })
    }).on('error', reject)
  })
  await Promise.all(Array.from({ length: connections }, async (_, i) => {
    let next = performance.now() + (interval * i) / connections
    while (performance.now() < until) {
      const wait = next - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      await one()
      next += interval
    }
  }))
  agent.destroy()
  times.sort((a, b) => a - b)
  const at = (q) => Number(quantile(times, q).toFixed(3))
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: Number(times[times.length - 1].toFixed(3)), requests: times.length }
}

try {
  // Warm-up: every server at full speed, then once at the rate.
  for (const id of variants) {
    await load(servers.get(id).port, 5)
    await load(servers.get(id).port, 1, rate)
  }
  const seen = new Map(variants.map((id) => [id, []]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const id of order) {
      const figures = await load(servers.get(id).port, windowSeconds, rate)
      seen.get(id).push(figures)
      console.log(`round ${round + 1}/${rounds} ${id}: p50 ${figures.p50} ms, p90 ${figures.p90} ms, p99 ${figures.p99} ms, max ${figures.max} ms (${figures.requests} requests)`)
    }
  }
  const median = (id, key) => Number(quantile(seen.get(id).map((figures) => figures[key]).sort((a, b) => a - b), 0.5).toFixed(3))
  console.log(`\nNode ${process.versions.node}, ${rate} requests/s on ${connections} connections, ${rounds} rounds of ${windowSeconds} s, medians of the rounds:\n`)
  console.log('| server | p50 ms | p90 ms | p99 ms | max ms |\n| --- | ---: | ---: | ---: | ---: |')
  for (const id of variants) console.log(`| ${id} | ${median(id, 'p50')} | ${median(id, 'p90')} | ${median(id, 'p99')} | ${median(id, 'max')} |`)
  for (const id of variants.slice(1)) console.log(`${id} ÷ fastify-twin: p50 ${(median(id, 'p50') / median('fastify-twin', 'p50')).toFixed(2)}×, p90 ${(median(id, 'p90') / median('fastify-twin', 'p90')).toFixed(2)}×, p99 ${(median(id, 'p99') / median('fastify-twin', 'p99')).toFixed(2)}×`)
} finally {
  await Promise.all([...servers.values()].map((server) => server.stop()))
}
