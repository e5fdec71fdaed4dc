import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify'
import { writeThroughReply } from './fallback-writer.js'
import { writeFast } from './fast-writer.js'
import { claimBody, responseParts } from './response.js'
import { hasOnSendHooks } from './route-context.js'

/**
 * The last step of a request: the fast writer when the response is an
 * un-materialized lightweight one and no onSend hook needs reply.send;
 * otherwise, or when one of the fast writer's guards fails, reply.send.
 * Returns undefined when the fast writer sent it (the handler then returns
 * nothing to Fastify, as a hijacked route does), or reply.send's promise.
 */
export function writeResponse (request: FastifyRequest, reply: FastifyReply, response: Response): Promise<FastifyReply> | undefined {
  const parts = responseParts(response)
  if (parts === undefined) {
    if (response.bodyUsed) throw new errorCodes.FST_ERR_REP_RESPONSE_BODY_CONSUMED()
    return writeThroughReply(request, reply, response, undefined)
  }
  // A body shared with copies (or this same response sent before) goes out once.
  if (parts.body !== null && !claimBody(response)) throw new errorCodes.FST_ERR_REP_RESPONSE_BODY_CONSUMED()
  if (!hasOnSendHooks(reply) && writeFast(reply, parts, request.raw.method ?? 'GET')) return undefined
  return writeThroughReply(request, reply, response, parts)
}
