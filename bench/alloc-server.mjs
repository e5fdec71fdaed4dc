// One variant's HTTP server for allocations.mjs: `node bench/alloc-server.mjs <variant>`.
// As server.mjs, plus V8's sampling heap profiler, started and stopped on
// the parent's request, counting the objects scavenges and full collections
// have already freed too: a request's allocations are nearly all gone by
// the time the profile is read. The answer is the bytes allocated in that
// span, by place (function, file and line) and by package.
import { Session } from 'node:inspector/promises'
import { startVariant } from './variants.mjs'
import { serveParent } from './proc.mjs'

const { server, served } = await startVariant(process.argv[2])

const session = new Session()
session.connect()
let startedAt = 0

serveParent(async (message) => {
  switch (message.type) {
    case 'address':
      return { port: server.address().port }
    case 'start':
      startedAt = served.requests
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: message.interval,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
      return {}
    case 'stop': {
      const { profile } = await session.post('HeapProfiler.stopSampling')
      return { requests: served.requests - startedAt, places: places(profile) }
    }
    default:
      throw new Error(`unknown message ${message.type}`)
  }
}, 20 * 60_000)

/** The profile's estimated bytes by allocating place: `function (file:line)`. */
function places (profile) {
  const bytes = {}
  const visit = (node) => {
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame
      const key = `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`
      bytes[key] = (bytes[key] ?? 0) + node.selfSize
    }
    for (const child of node.children) visit(child)
  }
  visit(profile.head)
  return bytes
}

function shortUrl (url) {
  if (url === '') return '(native)'
  const modules = url.lastIndexOf('/node_modules/')
  if (modules !== -1) return url.slice(modules + '/node_modules/'.length)
  const dist = url.indexOf('/dist/')
  if (dist !== -1) return 'fastify-hono/' + url.slice(dist + 1)
  const bench = url.indexOf('/bench/')
  if (bench !== -1) return url.slice(bench + 1)
  return url.replace(/^file:\/\//, '')
}
