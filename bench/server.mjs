// One variant's HTTP server, in its own process: `node bench/server.mjs <variant>`.
// Reports its CPU time and request count on request, so the runner can
// measure exactly the load generator's window, with the state of its heap:
// the young generation's size now, and the garbage collections so far (how
// many scavenges and full collections, and the time in each kind).
import { PerformanceObserver, constants } from 'node:perf_hooks'
import v8 from 'node:v8'
import { startVariant } from './variants.mjs'
import { serveParent } from './proc.mjs'

const { server, served } = await startVariant(process.argv[2])

const gc = { scavenges: 0, scavengeMs: 0, majors: 0, majorMs: 0 }
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gc.scavenges++
      gc.scavengeMs += entry.duration
    } else {
      gc.majors++
      gc.majorMs += entry.duration
    }
  }
}).observe({ entryTypes: ['gc'] })

function youngGeneration () {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
}

serveParent((message) => {
  switch (message.type) {
    case 'address':
      return { port: server.address().port }
    case 'snapshot':
      return { cpu: process.cpuUsage(), requests: served.requests, rss: process.memoryUsage.rss(), gc: { ...gc }, youngBytes: youngGeneration() }
    default:
      throw new Error(`unknown message ${message.type}`)
  }
}, 20 * 60_000)
