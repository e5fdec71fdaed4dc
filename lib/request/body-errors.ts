import { Buffer } from 'node:buffer'
import type { FastifyRequest } from 'fastify'
import { fastifyErrorOf, markClientBodyError } from '../errors.js'
import type { RequestBody } from './body.js'

/**
 * The error Fastify gets for one that left the app (an app without
 * onError, or one that rethrows): when it came from a body the client got
 * wrong, Fastify's 400 for it (see fastifyErrorOf in errors.ts), else the
 * error as it is. Runs on the error path only.
 *
 * The lightweight Request marks the errors it raises itself (an aborted
 * upload, json() on a body that is not JSON). Hono 4.13 parses the body
 * itself, though: `c.req.json()` is `JSON.parse(await c.req.text())`, and
 * `c.req.parseBody()` gives `c.req.arrayBuffer()` to a `Response`'s
 * formData(). Those errors are recognised here by the body the app read
 * through the Request: a SyntaxError whose message is exactly what parsing
 * those bytes as JSON gives, or a formData() TypeError on a multipart
 * request.
 */
export function appErrorToFastify (err: unknown, request: FastifyRequest, body: RequestBody | null): unknown {
  const bytes = body?.bytes
  if (bytes !== undefined) {
    if (err instanceof SyntaxError && jsonErrorMessage(bytes) === err.message) {
      markClientBodyError(err, bytes.length === 0 ? 'empty json' : 'invalid json')
    } else if (err instanceof TypeError && err.message.startsWith(FORM_DATA_FAILURE) && isMultipart(request.headers['content-type'])) {
      markClientBodyError(err, 'invalid form')
    }
  }
  return fastifyErrorOf(err)
}

/** How undici's formData() (Node 20 to 26) rejects a multipart body it cannot parse. */
const FORM_DATA_FAILURE = 'Failed to parse body as FormData'

const utf8 = new TextDecoder()

function jsonErrorMessage (bytes: Buffer): string | undefined {
  try {
    JSON.parse(utf8.decode(bytes))
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

function isMultipart (type: string | undefined): boolean {
  return type !== undefined && type.trimStart().toLowerCase().startsWith('multipart/form-data')
}
