/**
 * Bar charts drawn as SVG by hand (docs/console.md says why no library): one bar per day or
 * month, stacked when a point has several kinds. The figure is an image with a one-line summary
 * for screen readers, each bar has a tooltip (`<title>`), and the numbers themselves are in a
 * table under "Show the numbers". Colours come from classes (admin.css): the policy allows no
 * inline style. On a phone the chart is drawn on a narrower canvas, so that it keeps its height
 * and its text its size instead of shrinking with the screen.
 */
import { h, uid, type Child } from '../lib/dom.ts'
import { num } from './format.ts'
import { t } from './strings.ts'

const SVG = 'http://www.w3.org/2000/svg'

function svg(tag: string, attrs: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  el.append(...children)
  return el
}

export interface Point {
  /** Under the bar, when there is room (a short date, a month). */
  readonly axis: string
  /** In the tooltip and the table (a long date, a month). */
  readonly name: string
  /** A bar's height per kind (display only: the figures shown are `shown`). */
  readonly values: readonly number[]
  /** How each value is written (money as the API gave it, formatted); default a number. */
  readonly shown?: readonly string[]
}

export interface Series {
  /** Each kind stacked in a bar: its words and its colour class. */
  readonly kinds: readonly { readonly label: string; readonly className: string }[]
  readonly points: readonly Point[]
  /** How an axis value is written (money, a percentage); default a whole number. */
  readonly axis?: (value: number) => string
  /** Whether the axis may have fractional steps (a rate); counts have whole ones. */
  readonly fractional?: boolean
  /** The table's first column heading. */
  readonly pointName?: string
}

const BOTTOM = 40
const TOP = 16

/**
 * The axis: 0, then evenly spaced steps of 1, 2 or 5 × 10ⁿ up to the first at or above `max`,
 * at most 5 of them. Counts step by whole numbers: a maximum of 3 gives 0, 1, 2, 3.
 */
export function axisTicks(max: number, fractional = false): number[] {
  if (!(max > 0)) return [0, 1]
  let step = 0
  for (let exp = Math.floor(Math.log10(max)) - 1; step === 0; exp++) {
    for (const m of [1, 2, 5]) {
      const candidate = m * 10 ** exp
      if ((!fractional && candidate < 1) || step !== 0) continue
      if (max / candidate <= 5) step = candidate
    }
  }
  const count = Math.ceil(max / step - 1e-9)
  const digits = Math.max(0, -Math.floor(Math.log10(step)))
  return Array.from({ length: count + 1 }, (_, i) => Number((i * step).toFixed(digits)))
}

export function barChart(title: string, summary: string, series: Series): HTMLElement {
  const narrow = window.innerWidth < 600
  // A phone's canvas is narrower and taller: drawn at about its size, so its text stays legible.
  const W = narrow ? 420 : 900
  const H = narrow ? 300 : 220
  const LEFT = series.axis ? (narrow ? 64 : 80) : 44
  const totals = series.points.map((p) => p.values.reduce((a, b) => a + b, 0))
  const ticks = axisTicks(Math.max(0, ...totals), series.fractional)
  const top = ticks[ticks.length - 1] ?? 1
  const plotH = H - BOTTOM - TOP
  const slot = (W - LEFT) / Math.max(series.points.length, 1)
  const y = (v: number): number => TOP + plotH - (v / top) * plotH
  const axisText = series.axis ?? num
  const grid = ticks.map((v) =>
    svg('g', { class: 'grid' },
      svg('line', { x1: LEFT, x2: W, y1: y(v), y2: y(v) }),
      svg('text', { x: LEFT - 6, y: y(v) + 4, 'text-anchor': 'end' }, axisText(v))))
  const bars = series.points.map((p, i) => {
    let base = 0
    const gap = slot > 6 ? 1 : 0.5
    const parts = p.values.map((v, k) => {
      const rect = svg('rect', { x: LEFT + i * slot + gap, width: Math.max(slot - 2 * gap, 0.5), y: y(base + v), height: y(base) - y(base + v), class: series.kinds[k]?.className ?? '' })
      base += v
      return rect
    })
    const shown = (j: number): string => p.shown?.[j] ?? num(p.values[j] ?? 0)
    const tip = series.kinds.length === 1 ? shown(0) : series.kinds.map((k, j) => `${k.label} ${shown(j)}`).join(', ')
    return svg('g', {}, svg('title', {}, `${p.name}: ${tip}`), ...parts)
  })
  // Labels under the bars, as many as fit without touching (about 70 units each).
  const every = Math.max(1, Math.ceil((narrow ? 90 : 70) / slot))
  const room = narrow ? 80 : 64
  const labels = series.points.flatMap((p, i) => (i % every === 0 && (every === 1 || LEFT + i * slot + room <= W)
    ? [svg('text', { x: LEFT + i * slot + (every === 1 ? slot / 2 : 0), y: H - 14, class: 'tick', 'text-anchor': every === 1 ? 'middle' : 'start' }, p.axis)]
    : []))
  const figureId = uid('chart')
  const image = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${figureId}-title ${figureId}-summary`, class: `chart${narrow ? ' narrow' : ''}` },
    ...grid, ...bars, ...labels)
  return h('figure', { class: 'chart-figure' },
    h('figcaption', { id: `${figureId}-title` }, h('strong', null, title)),
    h('p', { id: `${figureId}-summary`, class: 'muted' }, summary),
    image,
    series.kinds.length > 1 ? legend(series) : null,
    numbers(title, series))
}

function legend(series: Series): HTMLElement {
  return h('ul', { class: 'legend' }, series.kinds.map((k) =>
    h('li', null, svgSwatch(k.className), k.label)))
}

function svgSwatch(className: string): Child {
  return svg('svg', { width: 12, height: 12, 'aria-hidden': 'true', class: 'swatch' }, svg('rect', { width: 12, height: 12, class: className }))
}

/** The chart's numbers as a table, points that have any (a screen reader's and a spreadsheet's view). */
function numbers(title: string, series: Series): HTMLElement {
  const rows = series.points.filter((p) => p.values.some((v) => v > 0))
  return h('details', { class: 'chart-numbers' },
    h('summary', null, t('admin.showNumbers')),
    rows.length === 0
      ? h('p', { class: 'muted' }, t('admin.noResults'))
      : h('table', null,
        h('caption', { class: 'visually-hidden' }, title),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, series.pointName ?? t('admin.date')),
          series.kinds.map((k) => h('th', { scope: 'col' }, k.label)))),
        h('tbody', null, rows.map((p) => h('tr', null, h('th', { scope: 'row' }, p.name),
          p.values.map((v, j) => h('td', null, p.shown?.[j] ?? num(v))))))))
}
