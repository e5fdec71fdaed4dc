import { Buffer } from 'node:buffer'

/** A body whose first chunks were read already: the reader, what it gave, and the read in flight. */
export interface StartedBody {
  readonly reader: ReadableStreamDefaultReader<Uint8Array>
  readonly chunks: Uint8Array[]
  pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined
}

/**
 * A native Response does not say whether its body was a string or a real
 * stream. Read what is ready without waiting for more: a body made from a
 * string, bytes or a Blob is complete after a read or two, and goes out as a
 * Buffer with its Content-Length; anything else goes on as a stream, starting
 * with the chunks already read. (@hono/node-server decides the same way.) A
 * stream that has already failed rejects here, before any head is written.
 */
export function bufferIfComplete (body: ReadableStream<Uint8Array>): Promise<Buffer | StartedBody> {
  return readReady(body, true)
}

/**
 * For a body the app framed as chunked itself: the chunks (or the error) a
 * stream already has, read without giving it a turn of the event loop.
 * Never a Buffer, however short the stream.
 */
export function readAvailable (body: ReadableStream<Uint8Array>): Promise<StartedBody> {
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
  return { reader, chunks, pending }
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

/**
 * A started body as a ReadableStream again, for reply.send. `failedBeforeFirstChunk`
 * runs if the body fails before it gave anything.
 */
export function streamOfStarted (body: StartedBody, failedBeforeFirstChunk?: () => void): ReadableStream<Uint8Array> {
  let gave = false
  return new ReadableStream<Uint8Array>({
    async pull (controller) {
      let result: ReadableStreamReadResult<Uint8Array>
      try {
        result = await readNext(body)
      } catch (err) {
        if (!gave) failedBeforeFirstChunk?.()
        throw err
      }
      gave = true
      if (result.done) controller.close()
      else controller.enqueue(result.value)
    },
    cancel (reason) {
      return body.reader.cancel(reason)
    }
  }, { highWaterMark: 0 })
}
