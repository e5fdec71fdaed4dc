// Imported, not the global: Node 20–26 define the global Buffer as a getter,
// which every use calls (about 15 ns; Buffer.byteLength runs on every request).
import { Buffer } from 'node:buffer'
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import { forgetFailedHead, presetContentLength } from '../internals/node.js'
import { isNullBodyStatus, type ResponseParts } from '../web/response.js'
import { takeBackMerge, withLength, type HeadLines } from './head.js'

/**
 * Writes a stored body straight to the raw HTTP/1 response: one writeHead,
 * one end, with the head the way out prepared. Node writes the length
 * itself where it can (presetContentLength); otherwise it is added to a copy
 * of the head. Throws (with Node's state reset) when writeHead rejects the
 * status or a header, so that Fastify's error handler answers 500 on a clean
 * slate.
 */
export function writeFast (reply: FastifyReply, parts: ResponseParts, head: HeadLines, method: string): void {
  const raw = reply.raw as ServerResponse
  const { status, body } = parts
  const noBody = isNullBodyStatus(status)
  let toWrite = head
  if (status === 204 || status === 304) {
    // Node marks these bodiless in writeHead and sends no length.
  } else {
    const length = noBody || body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
    if (presetContentLength(raw, length)) {
      // Node frames it.
    } else if (method === 'HEAD' && body === null) {
      // Hono answers HEAD with `new Response(null, getResponse)`: announce the GET's length.
      if (parts.headLength !== undefined) toWrite = withLength(head, parts.headLength)
    } else {
      // HTTP/1.0 (no chunking) or a HEAD answer with a body: the length must be explicit.
      toWrite = withLength(head, length)
    }
  }

  try {
    raw.writeHead(status, toWrite as OutgoingHttpHeaders)
  } catch (err) {
    forgetFailedHead(raw)
    takeBackMerge()
    throw err
  }
  reply.hijack()
  if (noBody || body === null) raw.end()
  else raw.end(body)
}
