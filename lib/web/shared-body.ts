import { Buffer } from 'node:buffer'
import * as nodeStream from 'node:stream'

/** The body kinds a lightweight Response keeps as they are. */
export type StoredBody = string | Uint8Array | null

/**
 * One stored body shared by a lightweight response and the copies Hono makes
 * of it (`new Response(res.body, res)`), as a native body is shared by every
 * Response built over the same stream. The stream is made only when someone
 * asks for `.body`; copies recognize it and share the stored body instead of
 * reading it. Reading any member, or sending one, consumes it for all.
 */
export interface SharedBody {
  readonly body: StoredBody
  /** What `.body` returns: a ReadableStream whose real stream is only built on first use. */
  lazy: LazyBodyStream | undefined
  /** The real stream, once something used the body as a stream. */
  stream: ReadableStream<Uint8Array> | undefined
  /** Sent by a writer, which did not go through the stream. */
  sent: boolean
  members: number
}

/** Past this many members a copy takes the native path: a bound on what one stored body holds alive. */
export const MAX_MEMBERS = 64

// Public since Node 16.8, missing from @types/node 20.
const isDisturbed = (nodeStream as unknown as { isDisturbed: (stream: unknown) => boolean }).isDisturbed

export function createSharedBody (body: StoredBody): SharedBody {
  return { body, lazy: undefined, stream: undefined, sent: false, members: 1 }
}

const kLazyGroup = Symbol('fastify-hono.lazyGroup')

/**
 * The body stream of a lightweight response, as `.body` returns it. It is a
 * ReadableStream (its prototype is ReadableStream.prototype, so instanceof
 * and every method work), but the real stream behind it is only built when
 * one of its methods is called: Hono reads `.body` only to hand it to
 * `new Response(body, res)`, which recognizes it and shares the stored body,
 * and building a ReadableStream is one of the dearest steps of a request
 * (bench/results has the figures). Node's internal APIs that check the stream's private
 * state (stream.Readable.fromWeb, for one) need the real stream: pass them
 * the result of `res.clone().body` or read it through getReader().
 */
class LazyBodyStream {
  declare [kLazyGroup]: SharedBody

  get locked (): boolean { return this[kLazyGroup].stream?.locked ?? false }
  cancel (reason?: unknown): Promise<void> { return streamOf(this[kLazyGroup]).cancel(reason) }
  getReader (options?: { mode?: 'byob' }): ReadableStreamDefaultReader<Uint8Array> | ReadableStreamBYOBReader {
    return streamOf(this[kLazyGroup]).getReader(options as { mode: 'byob' })
  }

  pipeThrough<T> (transform: ReadableWritablePair<T, Uint8Array>, options?: StreamPipeOptions): ReadableStream<T> {
    return streamOf(this[kLazyGroup]).pipeThrough(transform, options)
  }

  pipeTo (destination: WritableStream<Uint8Array>, options?: StreamPipeOptions): Promise<void> {
    return streamOf(this[kLazyGroup]).pipeTo(destination, options)
  }

  tee (): [ReadableStream<Uint8Array>, ReadableStream<Uint8Array>] { return streamOf(this[kLazyGroup]).tee() }
  values (options?: { preventCancel?: boolean }): AsyncIterableIterator<Uint8Array> {
    return (streamOf(this[kLazyGroup]) as unknown as { values: (o?: unknown) => AsyncIterableIterator<Uint8Array> }).values(options)
  }

  [Symbol.asyncIterator] (options?: { preventCancel?: boolean }): AsyncIterableIterator<Uint8Array> { return this.values(options) }
  [Symbol.for('nodejs.util.inspect.custom')] (): ReadableStream<Uint8Array> { return streamOf(this[kLazyGroup]) }
}
Object.setPrototypeOf(LazyBodyStream.prototype, ReadableStream.prototype)

/** The group's `.body` object (cheap: no stream is built). */
export function lazyStreamOf (group: SharedBody): ReadableStream<Uint8Array> {
  let lazy = group.lazy
  if (lazy === undefined) {
    lazy = Object.create(LazyBodyStream.prototype) as LazyBodyStream
    lazy[kLazyGroup] = group
    group.lazy = lazy
  }
  return lazy as unknown as ReadableStream<Uint8Array>
}

/** The real stream behind a lazy one; anything else is returned as it is. */
export function realStream<T> (body: T): T {
  return body instanceof LazyBodyStream ? streamOf(body[kLazyGroup]) as T : body
}

/** The group's one real stream, made on first need; a byte stream, as a native body is. */
export function streamOf (group: SharedBody): ReadableStream<Uint8Array> {
  let stream = group.stream
  if (stream === undefined) {
    const stored = group.body
    const bytes = typeof stored === 'string' ? Buffer.from(stored) : stored
    stream = new ReadableStream({
      type: 'bytes',
      start (controller) {
        if (bytes !== null && bytes.byteLength > 0) controller.enqueue(new Uint8Array(bytes))
        controller.close()
      }
    })
    // Already sent: the stream must read as consumed, as a native body would.
    if (group.sent) stream.cancel().catch(() => {})
    group.stream = stream
  }
  return stream
}

/** The group behind a lazy body stream, if it can still be shared without reading it. */
export function groupOfUsableStream (body: unknown): SharedBody | undefined {
  // typeof first: a string body (the common case) skips the instanceof lookup.
  if (typeof body !== 'object' || body === null || !(body instanceof LazyBodyStream)) return undefined
  const group = body[kLazyGroup]
  return isUsable(group) ? group : undefined
}

/** Neither read, nor locked by a reader, nor sent. */
export function isUsable (group: SharedBody): boolean {
  const stream = group.stream
  return !group.sent && (stream === undefined || (!stream.locked && !isDisturbed(stream)))
}

export function isUsed (group: SharedBody): boolean {
  return group.sent || (group.stream !== undefined && isDisturbed(group.stream))
}

/** A writer sent the stored body: every member now reads as consumed. */
export function markSent (group: SharedBody): void {
  group.sent = true
  if (group.stream !== undefined && !group.stream.locked) group.stream.cancel().catch(() => {})
}
