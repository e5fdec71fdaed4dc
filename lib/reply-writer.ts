import { Buffer } from 'node:buffer'
import { ServerResponse, STATUS_CODES } from 'node:http'
import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify'
import { hasNoBody, writeThroughReply } from './fallback-writer.js'
import { outgoingHeaders, writeFast } from './fast-writer.js'
import { bufferIfComplete } from './response-body.js'
import { claimBody, responseParts, type ResponseParts } from './response.js'
import { hasOnSendHooks } from './route-context.js'
import { writeStream } from './stream-writer.js'

/**
 * The last step of a request: the fast writer when the response is an
 * un-materialized lightweight one and no onSend hook needs reply.send;
 * otherwise, or when one of the fast writer's guards fails, reply.send.
 * Returns undefined when the fast writer sent it (the handler then returns
 * nothing to Fastify, as a hijacked route does), or reply.send's promise.
 */
export function writeResponse (request: FastifyRequest, reply: FastifyReply, response: Response): Promise<FastifyReply | undefined> | undefined {
  const parts = responseParts(response)
  if (parts === undefined) {
    if (response.bodyUsed) throw new errorCodes.FST_ERR_REP_RESPONSE_BODY_CONSUMED()
    if (hasOnSendHooks(reply)) return writeThroughReply(request, reply, response, undefined)
    return writeNative(request, reply, response)
  }
  // A body shared with copies (or this same response sent before) goes out once.
  if (parts.body !== null && !claimBody(response)) throw new errorCodes.FST_ERR_REP_RESPONSE_BODY_CONSUMED()
  if (!hasOnSendHooks(reply) && writeFast(reply, parts, request.raw.method ?? 'GET')) return undefined
  return writeThroughReply(request, reply, response, parts)
}

/**
 * A native (or materialized) Response with a body, on HTTP/1 with no onSend
 * hooks: a body that turns out to be complete goes out through the fast
 * writer with its length; a stream goes out through the stream writer. Any
 * other case, or a failed guard, takes reply.send.
 */
async function writeNative (request: FastifyRequest, reply: FastifyReply, response: Response): Promise<FastifyReply | undefined> {
  const raw = reply.raw
  const status = response.status
  const body = response.body
  const statusText = response.statusText
  if (body === null || hasNoBody(status) || !(raw instanceof ServerResponse) || raw.headersSent ||
    !raw.useChunkedEncodingByDefault || request.raw.method === 'HEAD' || (statusText !== '' && statusText !== STATUS_CODES[status])) {
    return writeThroughReply(request, reply, response, undefined)
  }
  const headers = response.headers
  const asStream: ResponseParts = { status, body: null, init: undefined, headers, headLength: undefined }
  if (headers.has('transfer-encoding')) {
    const streamHeaders = outgoingHeaders(reply, asStream, true)
    if (streamHeaders === undefined) return writeThroughReply(request, reply, response, undefined)
    await writeStream(reply, status, streamHeaders, body)
    return undefined
  }
  const payload = await bufferIfComplete(body)
  if (Buffer.isBuffer(payload)) {
    // Complete: from here on it is a stored body like a lightweight response's.
    const parts: ResponseParts = { status, body: payload, init: undefined, headers, headLength: undefined }
    if (writeFast(reply, parts, request.raw.method ?? 'GET')) return undefined
    return writeThroughReply(request, reply, response, parts)
  }
  const streamHeaders = outgoingHeaders(reply, asStream, true)
  if (streamHeaders === undefined) return writeThroughReply(request, reply, response, undefined, payload)
  await writeStream(reply, status, streamHeaders, payload)
  return undefined
}
