import { Writable } from 'node:stream'

// What the route-name tests share: requests in turn, a JSON log to read
// back, and fastify-metrics' duration counts.

/** GETs each path in turn, reading each body; the statuses. */
export async function hit (base: string, paths: string[]): Promise<number[]> {
  const statuses: number[] = []
  for (const path of paths) {
    const res = await fetch(base + path)
    await res.arrayBuffer()
    statuses.push(res.status)
  }
  return statuses
}

/** A stream for Fastify's logger, and the JSON lines written to it. */
export function jsonLog<Line> (): { stream: Writable, lines: Line[] } {
  const lines: Line[] = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text))
      callback()
    }
  })
  return { stream, lines }
}

/** fastify-metrics' request duration counts, by their labels, sorted. */
export function durationCounts (metrics: string): string[] {
  return metrics.split('\n')
    .filter((line) => line.startsWith('http_request_duration_seconds_count'))
    .map((line) => line.replace(/^http_request_duration_seconds_count/, ''))
    .sort()
}
