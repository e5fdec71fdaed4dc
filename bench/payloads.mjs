// The bytes every variant serves. The Hono app and the hand-written plain
// variants both build their responses from these, so they stay equivalent.

/** Every benchmarked path lives under this prefix, in every variant. */
export const PREFIX = '/h'

export const TEXT = 'Hello, World!'

export const JSON_OBJECT = { message: 'Hello, World!', id: 42, tags: ['fastify', 'hono'], active: true }

/** The "eight headers" case: eight custom headers on a short text body. */
export const EIGHT_HEADERS = {
  'x-request-origin': 'bench',
  'x-api-version': '2024-06-01',
  'x-ratelimit-limit': '1000',
  'x-ratelimit-remaining': '999',
  'x-ratelimit-reset': '1717200000',
  'cache-control': 'private, max-age=60',
  etag: '"5d41402abc4b2a76b9719d911017c592"',
  'x-content-type-options': 'nosniff'
}

export const BIG_BODY = Buffer.alloc(64 * 1024, 'fastify-hono benchmark payload. ')

/** The POST body the echo handlers parse and send back. */
export const ECHO_BODY = JSON.stringify({
  user: { id: 1234, name: 'Ada Lovelace', email: 'ada@example.com' },
  items: [{ sku: 'A-1', qty: 2 }, { sku: 'B-7', qty: 1 }, { sku: 'C-3', qty: 5 }],
  note: 'please deliver after 5pm'
})

export const SSE_EVENTS = 100

/** Exactly what hono/streaming's writeSSE({ data, id }) writes. */
export function sseEvent (i) {
  return `data: event ${i}\nid: ${i}\n\n`
}

/** The mixed case's parameter routes: /api/<resource>/:id. */
export const RESOURCES = [
  'users', 'orders', 'items', 'carts', 'products', 'reviews', 'sessions', 'tokens',
  'teams', 'projects', 'tasks', 'comments', 'invoices', 'payments', 'events', 'files'
]

/** Set by the mixed case's middleware after the handler ran. */
export const MIDDLEWARE_HEADER = ['x-served-by', 'bench']
