import type { ServerResponse, OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply } from 'fastify'
import { forgetFailedHead } from '../internals/node.js'
import type { HeadLines } from './head.js'

/**
 * Streams a body straight to the raw HTTP/1 response (chunked by Node), as
 * reply.send would through its web-stream pump, but without that pump's
 * extra layer per chunk: SSE and other streams cost less per event. The
 * first chunk is read before the head is written, so a stream that fails at
 * once still gets Fastify's 500; after the head, a failure destroys the
 * connection, so the client sees a truncated body, never a complete-looking
 * one. Writes wait for 'drain' (backpressure), and a client that goes away
 * cancels the stream, so Hono's onAbort runs.
 */
export async function writeStream (reply: FastifyReply, status: number, headers: HeadLines, body: ReadableStream<Uint8Array>): Promise<void> {
  const raw = reply.raw as ServerResponse
  const reader = body.getReader()
  let result = await reader.read()
  try {
    raw.writeHead(status, headers as OutgoingHttpHeaders)
  } catch (err) {
    forgetFailedHead(raw)
    reader.cancel(err).catch(() => {})
    throw err
  }
  reply.hijack()

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
  try {
    while (!result.done && !closed) {
      if (!raw.write(result.value) && !closed) {
        await new Promise<void>((resolve) => { wake = resolve })
        wake = undefined
      }
      if (closed) break
      result = await reader.read()
    }
    if (!closed) raw.end()
  } catch (err) {
    reply.log.warn({ err }, 'response stream failed after its headers were sent')
    raw.destroy(err as Error)
  } finally {
    raw.off('close', onClose)
    raw.off('drain', onDrain)
  }
}
