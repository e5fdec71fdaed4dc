import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify'
import { writeThroughReply } from './fallback-writer.js'
import { writeFast } from './fast-writer.js'
import { claimBody, responseParts } from './response.js'
import { hasOnSendHooks } from './route-context.js'

/**
 * The last step of a request: the fast writer when the response is an
 * un-materialized lightweight one and no onSend hook needs reply.send;
 * otherwise, or when one of the fast writer's guards fails, reply.send.
 */
export function writeResponse (request: FastifyRequest, reply: FastifyReply, response: Response): FastifyReply | Promise<FastifyReply> {
  const parts = responseParts(response)
  if (parts === undefined) {
    if (response.bodyUsed) throw new errorCodes.FST_ERR_REP_RESPONSE_BODY_CONSUMED()
    return writeThroughReply(request, reply, response, undefined)
  }
  // A body shared with copies (or this same response sent before) goes out once.
  if (parts.body !== null && !claimBody(response)) throw new errorCodes.FST_ERR_REP_RESPONSE_BODY_CONSUMED()
  if (!hasOnSendHooks(reply) && writeFast(reply, parts, request.raw.method ?? 'GET')) return reply
  return writeThroughReply(request, reply, response, parts)
}
