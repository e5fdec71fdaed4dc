import type { FastifyReply } from 'fastify'
import { writePlannedHead } from './head.js'
import type { Plan } from './plan.js'

/**
 * The fast writer: a stored body straight to the raw HTTP/1 response, one
 * writeHead and one end, as the plan says (head, length, body). If writeHead
 * throws, Node's state and Fastify's headers are reset (head.ts) and the
 * error reaches Fastify's error handler.
 */
export function writeFast (reply: FastifyReply, plan: Plan): void {
  const raw = reply.raw
  writePlannedHead(raw, plan)
  reply.hijack()
  const body = plan.body
  if (body === null) raw.end()
  else raw.end(body)
}
