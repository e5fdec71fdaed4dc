import { validateHeaderName, validateHeaderValue } from 'node:http'
import type { FastifyReply } from 'fastify'

// Connection-specific headers: HTTP/2 forbids them, and Node's
// Http2ServerResponse throws on them (checked on Node 20–26).
const http2Forbidden = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])

/**
 * Checks every header the app set before any of them reaches the reply, so a
 * value that `Headers` accepts but Node rejects (`'a\x01b'`) fails here, with
 * nothing half-written, and Fastify's error handler answers 500.
 */
export function assertWritableHeaders (headers: Headers): void {
  for (const [name, value] of headers) {
    validateHeaderName(name)
    validateHeaderValue(name, value)
  }
}

/**
 * Copies the app's headers onto the reply, over what hooks and plugins set
 * before: the app wins a conflict, except for Set-Cookie (each cookie kept,
 * Fastify's reply.header appends them) and Vary (the two lists combined).
 */
export function copyHeadersToReply (reply: FastifyReply, headers: Headers, http2: boolean): void {
  for (const [name, value] of headers) {
    if (http2 && http2Forbidden.has(name)) continue
    if (name === 'vary') {
      const existing = reply.getHeader('vary')
      reply.header('vary', existing === undefined ? value : combineVary(String(existing), value))
      continue
    }
    reply.header(name, value)
  }
}

/** Merges two Vary lists, each field once (case-insensitively), `*` absorbing the rest. */
export function combineVary (first: string, second: string): string {
  const seen = new Set<string>()
  const fields: string[] = []
  for (const field of (first + ',' + second).split(',')) {
    const trimmed = field.trim()
    if (trimmed === '') continue
    if (trimmed === '*') return '*'
    const key = trimmed.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    fields.push(trimmed)
  }
  return fields.join(', ')
}
