import { Buffer } from 'node:buffer'
import { responseBodyConsumed } from '../internals/fastify.js'
import { ALREADY_SENT, isNullBodyStatus, type ResponseParts } from '../web/response.js'
import type { BodyKind } from './plan.js'

/** A body whose first chunks were read already: the reader, what it gave, and the read in flight. */
export interface StartedBody {
  readonly reader: ReadableStreamDefaultReader<Uint8Array>
  readonly chunks: Uint8Array[]
  pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined
  /** An event stream (`text/event-stream`), which `fastify.close()` ends at once (shutdown.ts). */
  eventStream: boolean
  /** Bytes the writer has written so far, for the log line of a stream cut at close. */
  sent: number
}

/** What is known of a native Response once its ready part is read: the plan's inputs. */
export interface NativeRead {
  parts: ResponseParts
  kind: BodyKind
  /** The reason phrase, which a native Response may set. */
  statusText: string
  /** A live stream's reader and what it gave already. */
  started: StartedBody | undefined
}

/**
 * A native (or materialized) Response, read as far as the plan needs. What
 * its body has ready is read first, so the plan knows whether it is
 * complete (then it goes out like a stored body, with its length) or a live
 * stream; a stream that has already failed rejects here, before any head is
 * written. A body the app framed as chunked stays a stream, however short. A
 * body that a null body status (204, 304) keeps off the wire is cancelled
 * unread.
 */
export async function readNative (response: Response): Promise<NativeRead> {
  const { status, headers, body, statusText } = response
  const appWrote = body === null && headers.has(ALREADY_SENT)
  if (!appWrote && response.bodyUsed) throw responseBodyConsumed()
  let kind: BodyKind = 'none'
  let stored: Buffer | null = null
  let started: StartedBody | undefined
  if (body !== null && !isNullBodyStatus(status)) {
    const ready = headers.has('transfer-encoding') ? await readAvailable(body) : await bufferIfComplete(body)
    if (Buffer.isBuffer(ready)) {
      kind = 'read whole'
      stored = ready
    } else {
      kind = 'live stream'
      started = ready
      started.eventStream = isEventStream(headers.get('content-type'))
    }
  } else if (body !== null) {
    await body.cancel()
  }
  return { parts: { status, body: stored, init: undefined, headers, headLength: undefined, appWrote }, kind, statusText, started }
}

/**
 * A native Response does not say whether its body was a string or a real
 * stream. Read what is ready without waiting for more: a body made from a
 * string, bytes or a Blob is complete after a read or two, and goes out as a
 * Buffer with its Content-Length; anything else goes on as a stream, starting
 * with the chunks already read. (@hono/node-server decides the same way.) A
 * stream that has already failed rejects here, before any head is written.
 */
function bufferIfComplete (body: ReadableStream<Uint8Array>): Promise<Buffer | StartedBody> {
  return readReady(body, true)
}

/**
 * For a body the app framed as chunked itself: the chunks (or the error) a
 * stream already has, read without giving it a turn of the event loop.
 * Never a Buffer, however short the stream.
 */
function readAvailable (body: ReadableStream<Uint8Array>): Promise<StartedBody> {
  return readReady(body, false) as Promise<StartedBody>
}

async function readReady (body: ReadableStream<Uint8Array>, complete: boolean): Promise<Buffer | StartedBody> {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined
  let waitedForMacrotask = !complete
  for (let reads = 0; reads < MAX_READS;) {
    pending ??= reader.read()
    const result = await readyOrUndefined(pending)
    if (result === undefined) {
      // A Blob's stream may need one turn of the event loop; a live stream needs more.
      if (waitedForMacrotask) break
      waitedForMacrotask = true
      await new Promise((resolve) => setImmediate(resolve))
      continue
    }
    reads++
    if (result.done) {
      if (complete) return Buffer.concat(chunks)
      break // `pending` keeps the end for whoever reads on
    }
    pending = undefined
    chunks.push(result.value)
  }
  return { reader, chunks, pending, eventStream: false, sent: 0 }
}

/** Whether a Content-Type is `text/event-stream`, parameters aside. */
function isEventStream (type: string | null): boolean {
  return type !== null && /^\s*text\/event-stream\s*(?:;|$)/i.test(type)
}

const MAX_READS = 8

/** The result, if the promise settles within two microtask turns (a chunk already enqueued); a rejection passes through. */
export function readyOrUndefined<T> (promise: Promise<T>): Promise<T | undefined> {
  return Promise.race([promise, Promise.resolve().then(() => undefined)])
}

/** The next chunk of a started body: first those read already, then the read in flight, then new reads. */
export function readNext (body: StartedBody): Promise<ReadableStreamReadResult<Uint8Array>> {
  const chunk = body.chunks.shift()
  if (chunk !== undefined) return Promise.resolve({ done: false, value: chunk })
  const pending = body.pending
  if (pending === undefined) return body.reader.read()
  body.pending = undefined
  return pending
}
