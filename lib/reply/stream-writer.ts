import type { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import { readNext, readyOrUndefined, type StartedBody } from './complete-body.js'
import { trackStream } from '../shutdown.js'

/**
 * The stream writer's pump: a live body to the raw response, once the own
 * writer (own-writer.ts) has written the plan's head and hijacked the reply
 * (chunked by Node on HTTP/1, data frames on HTTP/2), as reply.send would
 * through its web-stream pump, but without that pump's extra layer per
 * chunk: SSE and other streams cost less per event.
 *
 * The head goes out at once, as it does on @hono/node-server: with the first
 * chunk when one is ready, else flushed on its own, so that an EventSource
 * opens and a proxy's first-byte timer stops even when the first event is
 * seconds away. (What the stream had ready, or an error it already had, was
 * read before: see complete-body.ts.) After the head, a failure destroys the
 * connection, so the client sees a truncated body, never a complete-looking
 * one. Writes wait for 'drain' (backpressure). A client that goes away, at
 * any moment, even before the head (own-writer.ts), cancels the stream, so
 * Hono's onAbort runs and the handler finishes; Fastify then runs its
 * onRequestAbort hooks, as for any route whose client left.
 */
export async function pipeStream (reply: FastifyReply, body: StartedBody): Promise<void> {
  const raw = reply.raw as ServerResponse
  const reader = body.reader
  let closed = false
  let wake: (() => void) | undefined
  const onClose = (): void => {
    closed = true
    reader.cancel().catch(() => {})
    wake?.()
  }
  const onDrain = (): void => { wake?.() }
  raw.on('close', onClose)
  raw.on('drain', onDrain)
  trackStream(reply, body) // fastify.close(): ended, or given until the close bound
  try {
    let next = readNext(body)
    let result = await readyOrUndefined(next)
    if (result === undefined) {
      // Nothing ready: the head goes out alone, now.
      raw.flushHeaders()
      result = await next
    }
    while (!result.done) {
      if (closed) break
      body.sent += result.value.byteLength
      if (!raw.write(result.value) && !closed) {
        await new Promise<void>((resolve) => { wake = resolve })
        wake = undefined
      }
      if (closed) break
      next = readNext(body)
      result = await next
    }
    if (!closed) raw.end()
  } catch (err) {
    if (!closed) {
      reply.log.warn({ err }, 'response stream failed after its headers were sent')
      raw.destroy(err as Error)
    }
  } finally {
    raw.off('close', onClose)
    raw.off('drain', onDrain)
  }
}
