// Horizontal bar charts as standalone SVG, for bench/charts/ (issue 23: figures drawn where a reader
// would rather look). No dependencies; the same input gives the same bytes, so a redraw that changes
// nothing leaves `git diff` empty. GitHub shows an SVG through <img>, where neither the page's theme
// nor its fonts reach: the chart paints its own background and names every colour, so it reads the
// same on a light or a dark page, and all words are <text> (selectable, read by screen readers).

export interface Bar {
  label: string
  value: number
  /** What is printed after the bar; the value and the chart's unit when absent. */
  text?: string
  /** Updraft, a peer, or a ceiling (what nothing can beat on that path): each has its own colour. */
  kind?: 'updraft' | 'peer' | 'ceiling'
}

export interface BarGroup {
  title?: string
  bars: Bar[]
}

/** A vertical line across the plot: a goal, a ceiling, the link's rate. */
export interface Reference {
  value: number
  label: string
}

export interface BarChart {
  title: string
  /** One or two sentences for the <desc>: what was measured and how to read it. */
  description: string
  unit: string
  groups: BarGroup[]
  references?: Reference[]
  /** The axis' end; the largest bar or reference when absent (rounded up to a tick). */
  max?: number
  /** Printed under the plot, e.g. where the figures come from. */
  footnote?: string
}

const COLOURS = {
  background: '#ffffff',
  border: '#d0d7de',
  text: '#1f2328',
  muted: '#59636e',
  grid: '#eaeef2',
  reference: '#cf222e',
  updraft: '#0969da',
  peer: '#8c959f',
  ceiling: '#1a7f37',
} as const
const LEGEND = { updraft: 'Updraft', peer: 'other clients', ceiling: 'ceiling (raw requests, no client)' } as const

const WIDTH = 760
const PAD = 16
const FONT = 12
const CHAR = 6.8 // a generous average advance of 12 px sans-serif, to size the label column
const BAR = 16
const STEP = 22 // one bar and its gap
const GROUP_TITLE = 24
const VALUE_ROOM = 150
const MAX_LABEL = 44

export function barChart(chart: BarChart): string {
  const bars = chart.groups.flatMap((group) => group.bars)
  const references = chart.references ?? []
  const top = Math.max(...bars.map((bar) => bar.value), ...references.map((reference) => reference.value), 0)
  const ticks = axisTicks(chart.max ?? top)
  const max = ticks[ticks.length - 1]!
  const labels = bars.map((bar) => clip(bar.label))
  const labelWidth = Math.ceil(Math.min(MAX_LABEL, Math.max(...labels.map((label) => label.length), 8)) * CHAR)
  const plotLeft = PAD + labelWidth + 10
  const plotWidth = WIDTH - plotLeft - VALUE_ROOM
  const x = (value: number) => round(plotLeft + (Math.max(0, value) / max) * plotWidth)
  const id = slug(chart.title)

  const heading = text(PAD, PAD + 18, chart.title, { size: 15, weight: 'bold' })
  // Reference labels sit above the plot, one row each, lowest value on top and to the right of its
  // line, so no label crosses another reference's line.
  const sorted = [...references].sort((a, b) => a.value - b.value)
  let y = PAD + 28 + sorted.length * 15
  const plotTop = y
  const referenceRows = sorted.map((reference, i) => ({
    reference,
    labelY: plotTop - 4 - (sorted.length - 1 - i) * 15,
  }))

  const rects: string[] = []
  const words: string[] = []
  let index = 0
  for (const group of chart.groups) {
    if (group.title) {
      y += GROUP_TITLE
      words.push(text(PAD, y - 7, group.title, { weight: 'bold', size: 13 }))
    }
    for (const bar of group.bars) {
      const label = labels[index++]!
      const end = x(bar.value)
      const value = bar.text ?? `${formatNumber(bar.value)} ${chart.unit}`
      rects.push(
        `<rect x="${plotLeft}" y="${y + 3}" width="${round(end - plotLeft)}" height="${BAR}" fill="${COLOURS[bar.kind ?? 'peer']}" rx="2"><title>${escapeXml(`${bar.label}: ${value}`)}</title></rect>`,
      )
      words.push(
        text(plotLeft - 8, y + 3 + BAR - 4, label, { anchor: 'end' }),
        text(end + 6, y + 3 + BAR - 4, value, { halo: true }),
      )
      y += STEP
    }
  }
  const plotBottom = y + 6

  const grid = ticks.map(
    (tick) =>
      `<line x1="${x(tick)}" y1="${plotTop}" x2="${x(tick)}" y2="${plotBottom}" stroke="${COLOURS.grid}" stroke-width="1"/>` +
      text(x(tick), plotBottom + 15, `${formatNumber(tick)}`, { anchor: 'middle', fill: COLOURS.muted, size: 11 }),
  )
  const lines = referenceRows.map(({ reference, labelY }) => {
    const at = x(reference.value)
    const fits = at + 4 + reference.label.length * CHAR * (11 / FONT) < WIDTH - PAD
    return (
      `<line x1="${at}" y1="${labelY + 4}" x2="${at}" y2="${plotBottom}" stroke="${COLOURS.reference}" stroke-width="1.5" stroke-dasharray="5 3"/>` +
      text(fits ? at + 4 : at - 4, labelY, reference.label, {
        anchor: fits ? 'start' : 'end',
        fill: COLOURS.reference,
        size: 11,
        halo: true,
      })
    )
  })
  y = plotBottom + 15
  const unitLabel = text(plotLeft + plotWidth, y + 15, chart.unit, { anchor: 'end', fill: COLOURS.muted, size: 11 })
  y += 15

  const kinds = (['updraft', 'peer', 'ceiling'] as const).filter((kind) =>
    bars.some((bar) => (bar.kind ?? 'peer') === kind),
  )
  const legend: string[] = []
  if (kinds.length > 1) {
    y += 12
    let left = PAD
    for (const kind of kinds) {
      legend.push(
        `<rect x="${left}" y="${y - 10}" width="12" height="12" fill="${COLOURS[kind]}" rx="2"/>${text(left + 17, y, LEGEND[kind], { fill: COLOURS.muted })}`,
      )
      left += 17 + LEGEND[kind].length * CHAR + 20
    }
  }
  if (chart.footnote) {
    y += 20
    legend.push(text(PAD, y, chart.footnote, { fill: COLOURS.muted, size: 11 }))
  }
  const height = Math.ceil(y + PAD)

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="${FONT}">`,
    `<title id="${id}-title">${escapeXml(chart.title)}</title>`,
    `<desc id="${id}-desc">${escapeXml(describe(chart))}</desc>`,
    `<rect x="0.5" y="0.5" width="${WIDTH - 1}" height="${height - 1}" fill="${COLOURS.background}" stroke="${COLOURS.border}" rx="6"/>`,
    heading,
    ...grid,
    ...rects,
    ...lines,
    ...words,
    unitLabel,
    ...legend,
    '</svg>',
    '',
  ].join('\n')
}

/** Every figure in words, for a screen reader (and for a search engine). */
function describe(chart: BarChart): string {
  const groups = chart.groups.map((group) => {
    const bars = group.bars
      .map((bar) => `${bar.label} ${bar.text ?? `${formatNumber(bar.value)} ${chart.unit}`}`)
      .join('; ')
    return group.title ? `${group.title}: ${bars}.` : `${bars}.`
  })
  const references = (chart.references ?? []).map(
    (reference) => `Line at ${formatNumber(reference.value)} ${chart.unit}: ${reference.label}.`,
  )
  return [chart.description, ...groups, ...references].join(' ')
}

interface TextStyle {
  anchor?: 'start' | 'middle' | 'end'
  fill?: string
  size?: number
  weight?: 'bold'
  /** A background-coloured outline, so the text stays legible where a line crosses it. */
  halo?: boolean
}

function text(x: number, y: number, content: string, style: TextStyle = {}): string {
  const attributes = [`x="${round(x)}"`, `y="${round(y)}"`, `fill="${style.fill ?? COLOURS.text}"`]
  if (style.anchor && style.anchor !== 'start') attributes.push(`text-anchor="${style.anchor}"`)
  if (style.size) attributes.push(`font-size="${style.size}"`)
  if (style.weight) attributes.push(`font-weight="${style.weight}"`)
  if (style.halo)
    attributes.push(`stroke="${COLOURS.background}" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`)
  return `<text ${attributes.join(' ')}>${escapeXml(content)}</text>`
}

/** Round steps of 1, 2, 2.5 or 5 x 10^n from 0 past `top`, four to six of them. */
export function axisTicks(top: number): number[] {
  if (!(top > 0)) return [0, 1]
  const rough = top / 5
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough)!
  const ticks: number[] = []
  for (let tick = 0; tick < top + step * 1e-9; tick += step) ticks.push(round(tick))
  if (ticks[ticks.length - 1]! < top - 1e-9) ticks.push(round(ticks[ticks.length - 1]! + step))
  return ticks
}

export function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}

const clip = (label: string) => (label.length > MAX_LABEL ? `${label.slice(0, MAX_LABEL - 1)}…` : label)
const round = (value: number) => Math.round(value * 10) / 10
const formatNumber = (value: number) => (Number.isInteger(value) ? String(value) : String(round(value)))
const slug = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'chart'
