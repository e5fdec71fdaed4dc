// Number formatting and a padded markdown table that reads in a terminal too.

export function fixed (value, digits = 1) {
  return Number.isFinite(value) ? value.toFixed(digits) : '–'
}

/** "12.3 (11.9–13.0)" */
export function withRange ({ median, min, max }, digits = 1) {
  return Number.isFinite(median) ? `${fixed(median, digits)} (${fixed(min, digits)}–${fixed(max, digits)})` : '–'
}

export function ratio (value) {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '–'
}

/** rows: arrays of cells. `align`: one 'l' or 'r' per column. */
export function markdownTable (header, rows, align = header.map((_, i) => (i === 0 ? 'l' : 'r'))) {
  const widths = header.map((h, i) => Math.max(String(h).length, 3, ...rows.map((r) => String(r[i]).length)))
  const pad = (cell, i) => (align[i] === 'r' ? String(cell).padStart(widths[i]) : String(cell).padEnd(widths[i]))
  const line = (cells) => `| ${cells.map(pad).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (align[i] === 'r' ? '-'.repeat(w - 1) + ':' : '-'.repeat(w))).join(' | ')} |`
  return [line(header), rule, ...rows.map(line)].join('\n')
}
