import * as nodeStream from 'node:stream'
import type { StoredBody } from './response.js'

/**
 * One stored body shared by a lightweight response and the copies Hono makes
 * of it (`new Response(res.body, res)`), as a native body is shared by every
 * Response built over the same stream. The stream is made only when someone
 * asks for `.body`; copies recognize it and share the stored body instead of
 * reading it. Reading any member, or sending one, consumes it for all.
 */
export interface SharedBody {
  readonly body: StoredBody
  stream: ReadableStream<Uint8Array> | undefined
  /** Sent by a writer, which did not go through the stream. */
  sent: boolean
  members: number
}

/** Past this many members a copy takes the native path (the draft upstream change caps at 64 too). */
export const MAX_MEMBERS = 64

// Public since Node 16.8, missing from @types/node 20.
const isDisturbed = (nodeStream as unknown as { isDisturbed: (stream: unknown) => boolean }).isDisturbed

const groupOfStream = new WeakMap<ReadableStream<Uint8Array>, SharedBody>()

export function createSharedBody (body: StoredBody): SharedBody {
  return { body, stream: undefined, sent: false, members: 1 }
}

/** The group's one stream, made on first request; a byte stream, as a native body is. */
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
    groupOfStream.set(stream, group)
  }
  return stream
}

/** The group whose stream this is, if it can still be shared without reading it. */
export function groupOfUsableStream (stream: unknown): SharedBody | undefined {
  if (!(stream instanceof ReadableStream)) return undefined
  const group = groupOfStream.get(stream)
  if (group === undefined || !isUsable(group)) return undefined
  return group
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
