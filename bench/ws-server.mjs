// One WebSocket variant's server, in its own process:
// `node bench/ws-server.mjs <variant>`. Reports its CPU time and the
// messages and WebSockets its echo handler counted, on request, so that the
// runner can measure exactly the load generator's window.
import { keepTickObjectAlive } from '../dist/internals/tick-object.js'
import { wsStats, wsVariantById } from './ws-app.mjs'
import { serveParent } from './proc.mjs'

// As in server.mjs: every process holds one tick object, as the plugin does
// in its own (on Node 20 and 22 a process can otherwise fall into V8's
// process.nextTick cliff, which would skew the ratios either way).
keepTickObjectAlive()

const { createServer } = await import(new URL(wsVariantById(process.argv[2]).module, import.meta.url))
const server = await createServer()
await new Promise((resolve, reject) => {
  server.once('error', reject)
  server.listen(0, '127.0.0.1', resolve)
})

serveParent((message) => {
  switch (message.type) {
    case 'address':
      return { port: server.address().port }
    case 'snapshot':
      return { cpu: process.cpuUsage(), messages: wsStats.messages, opened: wsStats.opened, rss: process.memoryUsage.rss() }
    default:
      throw new Error(`unknown message ${message.type}`)
  }
}, 20 * 60_000)
