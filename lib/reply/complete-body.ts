import { Buffer } from 'node:buffer'

/**
 * A native Response does not say whether its body was a string or a real
 * stream. Read what is ready without waiting for more: a body made from a
 * string, bytes or a Blob is complete after a read or two, and goes out as a
 * Buffer with its Content-Length; anything else goes on as a stream, starting
 * with the chunks already read. (@hono/node-server decides the same way.)
 */
export async function bufferIfComplete (body: ReadableStream<Uint8Array>): Promise<Buffer | ReadableStream<Uint8Array>> {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined
  let waitedForMacrotask = false
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
    pending = undefined
    if (result.done) return Buffer.concat(chunks)
    chunks.push(result.value)
  }
  return continueStream(reader, chunks, pending)
}

const MAX_READS = 8

function readyOrUndefined<T> (promise: Promise<T>): Promise<T | undefined> {
  // Two microtask turns: enough for a chunk that is already enqueued.
  return Promise.race([promise, Promise.resolve().then(() => undefined)])
}

function continueStream (
  reader: ReadableStreamDefaultReader<Uint8Array>,
  chunks: Uint8Array[],
  pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined
): ReadableStream<Uint8Array> {
  let index = 0
  return new ReadableStream<Uint8Array>({
    async pull (controller) {
      if (index < chunks.length) {
        controller.enqueue(chunks[index++])
        return
      }
      const result = await (pending ?? reader.read())
      pending = undefined
      if (result.done) controller.close()
      else controller.enqueue(result.value)
    },
    cancel (reason) {
      return reader.cancel(reason)
    }
  }, { highWaterMark: 0 })
}
