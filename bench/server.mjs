// One variant's HTTP server, in its own process: `node bench/server.mjs <variant>`.
// Reports its CPU time and request count on request, so the runner can
// measure exactly the load generator's window.
import { startVariant } from './variants.mjs'
import { serveParent } from './proc.mjs'

const { server, served } = await startVariant(process.argv[2])

serveParent((message) => {
  switch (message.type) {
    case 'address':
      return { port: server.address().port }
    case 'snapshot':
      return { cpu: process.cpuUsage(), requests: served.requests, rss: process.memoryUsage.rss() }
    default:
      throw new Error(`unknown message ${message.type}`)
  }
}, 20 * 60_000)
