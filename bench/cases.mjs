// The benchmark cases: what the load generator requests. Pure data, no
// server code, so the load generator can import it.
import { ECHO_BODY, PREFIX, RESOURCES } from './payloads.mjs'

export const cases = [
  { id: 'text', label: 'c.text()', method: 'GET', path: `${PREFIX}/text` },
  { id: 'json', label: 'c.json()', method: 'GET', path: `${PREFIX}/json` },
  { id: 'headers', label: '8 headers', method: 'GET', path: `${PREFIX}/headers` },
  // The same parameter route without and with cors() plus a c.header() after
  // next(): what Hono's response copying costs (target: at most 1.10×).
  { id: 'param', label: 'param route', method: 'GET', path: `${PREFIX}/bare/users/7` },
  { id: 'middleware', label: 'param + cors + header', method: 'GET', path: `${PREFIX}/api/users/7` },
  { id: 'mixed', label: 'mixed traffic', method: 'GET', path: `${PREFIX}/api/users/1`, mixed: true },
  { id: 'big', label: '64 KiB body', method: 'GET', path: `${PREFIX}/big` },
  {
    id: 'echo',
    label: 'POST JSON echo',
    method: 'POST',
    path: `${PREFIX}/echo`,
    headers: { 'content-type': 'application/json' },
    body: ECHO_BODY
  },
  { id: 'sse', label: 'SSE, 100 events', method: 'GET', path: `${PREFIX}/sse` }
]

/** The cases the production-stack variants serve (stack.mjs). */
export const STACK_CASES = ['text', 'json', 'param', 'mixed', 'echo']

/** The cases the stack's reference variants without its onSend plugins serve. */
export const HEADERS_CASES = ['text', 'json']

export function caseById (id) {
  const found = cases.find((c) => c.id === id)
  if (found === undefined) throw new Error(`Unknown case "${id}" (known: ${cases.map((c) => c.id).join(', ')})`)
  return found
}

const MIXED_IDS = 4096
const MIXED_LENGTH = 1 << 16

/**
 * The mixed case's request paths, a fixed sequence from a seeded generator:
 * 80% parameter routes (16 routes, 4,096 ids), 10% text, 10% JSON.
 */
export function mixedPaths (seed = 0x5eed) {
  const random = mulberry32(seed)
  const paths = new Array(MIXED_LENGTH)
  for (let i = 0; i < MIXED_LENGTH; i++) {
    const pick = random()
    if (pick < 0.1) paths[i] = `${PREFIX}/text`
    else if (pick < 0.2) paths[i] = `${PREFIX}/json`
    else {
      const resource = RESOURCES[Math.floor(random() * RESOURCES.length)]
      paths[i] = `${PREFIX}/api/${resource}/${Math.floor(random() * MIXED_IDS)}`
    }
  }
  return paths
}

/** A small seeded PRNG (mulberry32), shared by the generated load sequences. */
export function mulberry32 (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
