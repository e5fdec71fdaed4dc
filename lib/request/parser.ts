import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify'
import { errorCodes } from 'fastify'
import { isHttp2 } from '../internals/node.js'

/**
 * The mount's body parser: the app reads the body itself, in any format, so
 * it gets the stream untouched, in this scope only (the parent keeps its
 * parsers).
 */
export function passBodiesThrough (fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('*', passthroughBody)
  // The same parser under the common media types: Fastify 5.12 caches the
  // parser it finds for a Content-Type, except the catch-all, which costs a
  // Content-Type parse on every request that has a body.
  fastify.addContentTypeParser(COMMON_MEDIA_TYPES, passthroughBody)
}

const COMMON_MEDIA_TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/octet-stream']

function passthroughBody (request: FastifyRequest, payload: unknown, done: (err: Error | null, body?: unknown) => void): void {
  // Refuse at once what the declared length already puts over the limit.
  if (declaredTooLarge(request)) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
    return
  }
  done(null, payload)
}

/**
 * Fastify adds `Connection: close` to a body parser's error only from 5.5.0:
 * before, the 413 for a declared length over the limit kept the connection
 * and the server read the whole body. Only there, a preParsing hook
 * (closeIfTooLarge) sets it first.
 */
export function closesOnParserError (version: string): boolean {
  const [major, minor] = version.split('.').map(Number)
  return !(major === 5 && minor < 5)
}

export const closeIfTooLarge: preParsingHookHandler = (request, reply, payload, done) => {
  if (!isHttp2(request.raw) && declaredTooLarge(request)) reply.header('connection', 'close')
  done(null, payload)
}

function declaredTooLarge (request: FastifyRequest): boolean {
  const declared = request.headers['content-length']
  return declared !== undefined && Number(declared) > (request.routeOptions.bodyLimit ?? Infinity)
}
