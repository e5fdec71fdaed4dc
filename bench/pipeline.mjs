// The pipeline benchmark's runner: one fresh process per variant and round,
// variants interleaved round by round.
import { fileURLToPath } from 'node:url'
import { startChild } from './proc.mjs'

const worker = fileURLToPath(new URL('./pipeline-worker.mjs', import.meta.url))

/**
 * Returns one row per round, case and variant: { round, caseId, variant,
 * nsPerRequest (CPU time, best of `reps` runs of `requests`), ... }.
 * `onRow` sees each row as it comes, for progress output.
 */
export async function runPipeline ({ variants, cases, rounds, requests, warmup, reps, core, onRow }) {
  const rows = []
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round, so no variant always runs first.
    const order = variants.map((_, i) => variants[(i + round) % variants.length])
    // Alternate the case order too, for the same reason.
    const caseOrder = round % 2 === 0 ? cases : [...cases].reverse()
    for (const variant of order) {
      const child = startChild(worker, [variant], core)
      try {
        const { results } = await child.call({ type: 'run', cases: caseOrder, requests, warmup, reps }, 180_000)
        for (const caseId of cases) {
          const row = { round, caseId, variant, ...results[caseId] }
          rows.push(row)
          onRow?.(row)
        }
      } finally {
        await child.stop()
      }
    }
  }
  return rows
}
