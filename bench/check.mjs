// Correctness probes: one request per variant and case, compared with what
// @hono/node-server (Hono's own Node adapter) sends for the same request.
import http from 'node:http'
import { cases } from './cases.mjs'
import { PREFIX } from './payloads.mjs'

/**
 * The requests probed: every case (one route of the mixed one), each with
 * its caseId, plus two that are not benchmarked: HEAD and an unknown path.
 */
export const probes = [
  ...cases.map((c) => ({ id: c.id, caseId: c.id, method: c.method, path: c.mixed ? `${PREFIX}/api/users/7` : c.path, headers: c.headers, body: c.body })),
  { id: 'head-text', method: 'HEAD', path: `${PREFIX}/text` },
  { id: 'not-found', method: 'GET', path: `${PREFIX}/missing` }
]

/** Sends one request on a fresh connection; resolves with status, headers and body. */
export function probe (port, { method, path, headers, body }) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      const chunks = []
      response.on('data', (chunk) => chunks.push(chunk))
      response.on('end', () => resolve({
        status: response.statusCode,
        headers: headerMap(response.rawHeaders),
        body: Buffer.concat(chunks)
      }))
      response.on('error', reject)
    })
    request.setTimeout(5000, () => request.destroy(new Error(`${method} ${path}: no response in 5 s`)))
    request.on('error', reject)
    request.end(body)
  })
}

// Set per connection or per second by Node itself: not the variant's doing.
const IGNORED = new Set(['date', 'keep-alive'])
// Counted per request by @fastify/rate-limit (the stack variants): only
// whether they are there is compared, not their values.
const COUNTED = new Set(['x-ratelimit-remaining', 'x-ratelimit-reset'])

function headerMap (rawHeaders) {
  const map = {}
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase()
    if (IGNORED.has(name)) continue
    if (COUNTED.has(name)) {
      map[name] = '(counted)'
      continue
    }
    map[name] = map[name] === undefined ? rawHeaders[i + 1] : `${map[name]}, ${rawHeaders[i + 1]}`
  }
  return map
}

/** Differences of `actual` from `reference`, as short sentences; empty when equivalent. */
export function compare (reference, actual) {
  const notes = []
  if (actual.status !== reference.status) notes.push(`status ${actual.status}, expected ${reference.status}`)
  if (!actual.body.equals(reference.body)) {
    notes.push(`body differs (${actual.body.length} bytes, expected ${reference.body.length})`)
  }
  const names = new Set([...Object.keys(reference.headers), ...Object.keys(actual.headers)])
  for (const name of [...names].sort()) {
    const want = reference.headers[name]
    const got = actual.headers[name]
    if (want === got) continue
    if (got === undefined) notes.push(`no ${name} (expected ${want})`)
    else if (want === undefined) notes.push(`extra ${name}: ${got}`)
    else notes.push(`${name}: ${got} (expected ${want})`)
  }
  return notes
}

/** A response is usable for measuring when its status and body match the reference. */
export function isUsable (reference, actual) {
  return actual.status === reference.status && actual.body.equals(reference.body)
}
