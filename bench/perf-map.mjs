// V8's perf map (/tmp/perf-<pid>.map, written under --perf-basic-prof),
// read so that the newest code at an address names it: V8 reuses the memory
// of code it has freed, and a profiler that takes the first entry for an
// address names request-path code after long-gone startup functions.
import { readFileSync } from 'node:fs'

/**
 * Compiled JavaScript has no symbol, but V8 with --perf-basic-prof writes
 * every code object's address range and name to /tmp/perf-<pid>.map: each
 * address a profiler names goes to the function whose code holds it now
 * (instructions.mjs with callgrind's addresses, profile.mjs with perf's).
 */
export function readPerfMap (pid) {
  const ranges = []
  let text
  try {
    text = readFileSync(`/tmp/perf-${pid}.map`, 'utf8')
  } catch {
    return ranges
  }
  // V8 reuses the addresses of code it has freed: a later line for the same
  // start describes the code there now, and an earlier range that overlaps a
  // later one is dropped.
  const byStart = new Map()
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
    if (m !== null) byStart.set(parseInt(m[1], 16), { start: parseInt(m[1], 16), end: parseInt(m[1], 16) + parseInt(m[2], 16), name: m[3], order: byStart.size })
  }
  const sorted = [...byStart.values()].sort((a, b) => a.start - b.start)
  for (let i = 0; i < sorted.length; i++) {
    const next = sorted[i + 1]
    if (next !== undefined && next.start < sorted[i].end) {
      if (next.order > sorted[i].order) sorted[i].end = next.start
      else next.start = sorted[i].end
    }
  }
  for (const range of sorted) ranges.push(range)
  return ranges.filter((r) => r.end > r.start)
}

/** The function whose code holds `address` (the ranges are sorted and no longer overlap). */
export function functionAt (ranges, address) {
  let low = 0
  let high = ranges.length - 1
  while (low <= high) {
    const mid = (low + high) >> 1
    if (ranges[mid].end <= address) low = mid + 1
    else if (ranges[mid].start > address) high = mid - 1
    else return ranges[mid].name
  }
  return undefined
}
