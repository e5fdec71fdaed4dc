// Turns the raw rows of a run into per-case, per-variant figures: median and
// range of each metric, and the ratio to the baseline computed within each
// round before taking the median (rounds drift; ratios within one are steadier).

export function median (values) {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

export function spread (values) {
  const finite = values.filter(Number.isFinite)
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length }
}

/**
 * rows: [{ round, caseId, variant, ...metrics }]. `metric` is the one the
 * ratio is computed on; `baseline` is the variant it divides by, or a
 * function giving it for each variant. Returns { [caseId]: { [variant]: { [metric]: spread, ratio: spread } } }.
 */
export function summarize (rows, { metrics, ratioMetric, baseline }) {
  const byCell = new Map()
  for (const row of rows) {
    const key = `${row.caseId}\0${row.variant}`
    if (!byCell.has(key)) byCell.set(key, [])
    byCell.get(key).push(row)
  }
  const summary = {}
  for (const [key, cellRows] of byCell) {
    const [caseId, variant] = key.split('\0')
    const cell = {}
    for (const metric of metrics) cell[metric] = spread(cellRows.map((r) => r[metric]))
    const ratios = []
    const under = typeof baseline === 'function' ? baseline(variant) : baseline
    for (const row of cellRows) {
      const base = rows.find((r) => r.caseId === caseId && r.variant === under && r.round === row.round)
      if (base !== undefined) ratios.push(row[ratioMetric] / base[ratioMetric])
    }
    cell.ratio = spread(ratios)
    summary[caseId] ??= {}
    summary[caseId][variant] = cell
  }
  return summary
}
