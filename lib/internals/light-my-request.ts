// light-my-request, the library behind fastify.inject(), checked on 6.8.1.
// Its Response (lib/response.js) is a ServerResponse that marks itself with
// an own field `isLightMyRequest = true`, and builds inject()'s headers from
// getHeaders() after writeHead, plus Date, Connection and Transfer-Encoding
// read back from the head Node wrote. A Content-Length that Node writes
// itself from `_contentLength` (internals/node.ts) is in neither, so for
// inject() the plan passes the length to writeHead explicitly.

/**
 * Whether the raw response is light-my-request's. If the field ever goes,
 * inject() shows no Content-Length for the fast writer's responses (the
 * socket still does); test/inject-parity.test.ts fails.
 */
export function isInjected (raw: object): boolean {
  return (raw as { isLightMyRequest?: unknown }).isLightMyRequest === true
}
