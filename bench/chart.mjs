// The ratio chart: for each case, one horizontal bar per variant, drawn from
// the 1.0 line (the plain Fastify route) on a log scale: left is cheaper,
// right is costlier, and 2× costlier is as long as 2× cheaper.

const COLORS = ['#8c8c8c', '#4c72b0', '#dd8452', '#55a868', '#c44e52', '#8172b3', '#937860', '#da8bc3']
const BAR = 13
const GAP = 3
const GROUP_GAP = 16
const LABEL_WIDTH = 190
const PLOT_WIDTH = 520
const VALUE_WIDTH = 70
const TOP = 80

function escape (text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** Powers of two around the data, at least 0.5× to 2×. */
function domain (ratios) {
  const finite = ratios.filter((r) => Number.isFinite(r) && r > 0)
  const low = Math.min(-1, Math.floor(Math.log2(Math.min(...finite, 1))))
  const high = Math.max(1, Math.ceil(Math.log2(Math.max(...finite, 1))))
  return [low, high]
}

/**
 * groups: [{ title, bars: [{ variant, ratio }] }]; variants: [{ id, label }].
 * Returns the SVG document as a string.
 */
export function renderRatioChart ({ title, subtitle, groups, variants }) {
  const color = new Map(variants.map((v, i) => [v.id, COLORS[i % COLORS.length]]))
  const [low, high] = domain(groups.flatMap((g) => g.bars.map((b) => b.ratio)))
  const x = (ratio) => LABEL_WIDTH + ((Math.log2(ratio) - low) / (high - low)) * PLOT_WIDTH
  const groupHeight = (g) => 20 + g.bars.length * (BAR + GAP) + GROUP_GAP
  const bottom = TOP + groups.reduce((sum, g) => sum + groupHeight(g), 0)
  const height = bottom + 30
  const width = LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH + 10
  const out = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`)
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`)
  out.push(`<text x="10" y="24" font-size="16" font-weight="600">${escape(title)}</text>`)
  out.push(`<text x="10" y="44" fill="#555">${escape(subtitle)}</text>`)
  out.push(`<text x="${x(1) - 6}" y="${TOP - 14}" text-anchor="end" fill="#555">← cheaper</text>`)
  out.push(`<text x="${x(1) + 6}" y="${TOP - 14}" fill="#555">costlier →</text>`)

  for (let power = low; power <= high; power++) {
    const tick = 2 ** power
    out.push(`<line x1="${x(tick)}" y1="${TOP}" x2="${x(tick)}" y2="${bottom}" stroke="#e5e5e5"/>`)
    out.push(`<text x="${x(tick)}" y="${bottom + 16}" text-anchor="middle" fill="#555">${tick}×</text>`)
  }

  let y = TOP
  for (const group of groups) {
    out.push(`<text x="10" y="${y + 14}" font-weight="600">${escape(group.title)}</text>`)
    y += 20
    for (const bar of group.bars) {
      const label = variants.find((v) => v.id === bar.variant)?.label ?? bar.variant
      const textY = y + BAR - 2
      out.push(`<text x="${LABEL_WIDTH - 8}" y="${textY}" text-anchor="end" fill="#333">${escape(label)}</text>`)
      if (Number.isFinite(bar.ratio) && bar.ratio > 0) {
        const from = Math.min(x(1), x(bar.ratio))
        const w = Math.max(1.5, Math.abs(x(bar.ratio) - x(1)))
        out.push(`<rect x="${from.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${BAR}" fill="${color.get(bar.variant)}"><title>${escape(`${group.title}, ${label}: ${bar.ratio.toFixed(2)}×`)}</title></rect>`)
        out.push(`<text x="${width - 10}" y="${textY}" text-anchor="end" fill="#333">${bar.ratio.toFixed(2)}×</text>`)
      } else {
        out.push(`<text x="${width - 10}" y="${textY}" text-anchor="end" fill="#c00">no data</text>`)
      }
      y += BAR + GAP
    }
    y += GROUP_GAP
  }
  // The reference: plain Fastify.
  out.push(`<line x1="${x(1)}" y1="${TOP - 8}" x2="${x(1)}" y2="${bottom}" stroke="#000" stroke-width="1.5" stroke-dasharray="5,3"/>`)
  out.push(`<text x="${x(1)}" y="${TOP - 28}" text-anchor="middle" fill="#000">1.0 = Fastify route</text>`)
  out.push('</svg>')
  return out.join('\n') + '\n'
}
