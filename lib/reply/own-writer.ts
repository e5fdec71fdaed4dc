import type { FastifyReply } from 'fastify'
import { clientGone } from '../web/client-abort.js'
import type { StartedBody } from './complete-body.js'
import { writePlannedHead } from './head.js'
import type { HeadPlan, Plan } from './plan.js'
import { pipeStream } from './stream-writer.js'

/** What the own writer takes: a head plan, and the stored body the fast way ends with (null for a stream). */
export type OwnPlan = HeadPlan & Pick<Plan, 'body'>

/**
 * The plugin's own writer, for the ways `fast` and `stream`, and for what
 * the onSend hooks the plugin ran handed back (on-send.ts): the plan's head first
 * (head.ts: the merge into Fastify's record, the length, the one guarded
 * writeHead), then the body. A stored body (no `live` stream) ends the
 * response at once: one writeHead and one end. A live stream is piped with
 * backpressure (stream-writer.ts); the promise settles when it is done.
 *
 * If writeHead throws, Node's state and Fastify's headers are reset
 * (head.ts: the plan's merge taken back, or `undo` run, which after onSend
 * hooks puts the reply's headers back), a live stream is cancelled, and the error reaches Fastify's
 * error handler: thrown for a stored body, a rejection for a stream. A
 * client gone before a stream's head cancels the stream, and nothing is
 * written.
 */
export function writeOwn (reply: FastifyReply, plan: OwnPlan, live: StartedBody | undefined, undo?: () => void): Promise<void> | undefined {
  const raw = reply.raw
  if (live !== undefined && clientGone(reply.request.raw, raw)) {
    reply.hijack()
    return live.reader.cancel().then(nothing, nothing)
  }
  try {
    writePlannedHead(raw, plan, undo)
  } catch (err) {
    if (live === undefined) throw err
    live.reader.cancel(err).catch(nothing)
    return Promise.reject(err)
  }
  reply.hijack()
  if (live !== undefined) return pipeStream(reply, live)
  const body = plan.body
  if (body === null) raw.end()
  else raw.end(body)
  return undefined
}

function nothing (): undefined {
  return undefined
}
