// What the rolling restart's workers and its clients must agree on: the
// download's bytes, the data of each event in the shared log, the pacing.
import { createHash } from 'node:crypto'

export const DOWNLOAD_CHUNK_SIZE = 64 * 1024
export const DOWNLOAD_CHUNKS = 16
/** Milliseconds between two chunks of a download: about 16 pauses per download. */
export const DOWNLOAD_PAUSE = 4
/** Milliseconds between two events of an SSE stream. */
export const SSE_INTERVAL = 20
/** The `retry:` the SSE stream sends: the client's reconnection delay. */
export const SSE_RETRY = 100

const chunks = []

/** Chunk `i` of the download: bytes that depend on `i` and their offset. */
export function downloadChunk (i) {
  if (chunks[i] === undefined) {
    const chunk = Buffer.alloc(DOWNLOAD_CHUNK_SIZE)
    for (let offset = 0; offset < chunk.length; offset++) chunk[offset] = (i * 31 + offset * 7 + (offset >> 8)) & 0xff
    chunks[i] = chunk
  }
  return chunks[i]
}

/** The SHA-256 (hex) of the whole download. */
export function downloadDigest () {
  const hash = createHash('sha256')
  for (let i = 0; i < DOWNLOAD_CHUNKS; i++) hash.update(downloadChunk(i))
  return hash.digest('hex')
}

/** The data of event `n` in the shared log. */
export function eventData (n) {
  return `event ${n} ${createHash('sha256').update(String(n)).digest('hex').slice(0, 16)}`
}
