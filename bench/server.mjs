// One variant's HTTP server, in its own process: `node bench/server.mjs <variant>`.
// Reports its CPU time and request count on request, so the runner can
// measure exactly the load generator's window.
import { tickObjectModule } from './base.mjs'
import { loadVariant } from './variants.mjs'
import { serveParent } from './proc.mjs'

const variantId = process.argv[2]

// Every variant gets what fastify-hono does for itself (lib/internals/tick-object.ts):
// on Node 20 and 22 any server process can fall into the process.nextTick
// cliff (about 5 µs per request) at its first requests, and a baseline that
// fell into it while fastify-hono did not would flatter every ratio. The
// base variant (targets.mjs --base=) uses its own build's function, which
// its plugin calls too, so that it holds one tick object like the others.
const { keepTickObjectAlive } = await import(tickObjectModule(variantId))
keepTickObjectAlive()

const createServer = await loadVariant(variantId)
const server = await createServer()
let requests = 0
server.on('request', () => { requests++ })
await new Promise((resolve, reject) => {
  server.once('error', reject)
  server.listen(0, '127.0.0.1', resolve)
})

serveParent((message) => {
  switch (message.type) {
    case 'address':
      return { port: server.address().port }
    case 'snapshot':
      return { cpu: process.cpuUsage(), requests, rss: process.memoryUsage.rss() }
    default:
      throw new Error(`unknown message ${message.type}`)
  }
}, 20 * 60_000)
