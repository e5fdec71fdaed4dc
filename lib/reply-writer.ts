import type { FastifyReply, FastifyRequest } from 'fastify'
import { writeThroughReply } from './fallback-writer.js'
import { writeFast } from './fast-writer.js'
import { responseParts } from './response.js'
import { hasOnSendHooks } from './route-context.js'

/**
 * The last step of a request: the fast writer when the response is an
 * un-materialized lightweight one and no onSend hook needs reply.send;
 * otherwise, or when one of the fast writer's guards fails, reply.send.
 */
export function writeResponse (request: FastifyRequest, reply: FastifyReply, response: Response): FastifyReply | Promise<FastifyReply> {
  const parts = responseParts(response)
  if (parts !== undefined && !hasOnSendHooks(reply) && writeFast(reply, parts, request.raw.method ?? 'GET')) return reply
  return writeThroughReply(request, reply, response)
}
