/**
 * Bar charts drawn as SVG by hand (docs/console.md says why no library): one bar per day, stacked
 * when a day has several kinds. The figure is an image with a one-line summary for screen
 * readers, each bar has a tooltip (`<title>`), and the numbers themselves are in a table under
 * "Show the numbers". Colours come from classes (admin.css): the policy allows no inline style.
 */
import { h, uid, type Child } from '../lib/dom.ts'
import { day, num } from './format.ts'
import { t } from './strings.ts'

const SVG = 'http://www.w3.org/2000/svg'

function svg(tag: string, attrs: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  el.append(...children)
  return el
}

export interface Series {
  /** Each kind stacked in a bar: its words and its colour class. */
  readonly kinds: readonly { readonly label: string; readonly className: string }[]
  /** One entry per day: the day and a value per kind. */
  readonly days: readonly { readonly date: string; readonly values: readonly number[] }[]
}

const W = 900
const H = 220
const LEFT = 56
const BOTTOM = 40
const TOP = 16

/** A ceiling for the axis that reads well: 1, 2, 5, 10, 20, 50… */
function niceMax(max: number): number {
  if (max <= 4) return Math.max(max, 1)
  const step = 10 ** Math.floor(Math.log10(max))
  return ([1, 2, 5, 10].find((m) => m * step >= max) ?? 10) * step
}

export function barChart(title: string, summary: string, series: Series): HTMLElement {
  const totals = series.days.map((d) => d.values.reduce((a, b) => a + b, 0))
  const top = niceMax(Math.max(0, ...totals))
  const plotH = H - BOTTOM - TOP
  const slot = (W - LEFT) / Math.max(series.days.length, 1)
  const y = (v: number): number => TOP + plotH - (v / top) * plotH
  // Whole numbers only: an axis up to 1 has no line at 0.5.
  const grid = [...new Set([0, Math.round(top / 2), top])].map((v) =>
    svg('g', { class: 'grid' },
      svg('line', { x1: LEFT, x2: W, y1: y(v), y2: y(v) }),
      svg('text', { x: LEFT - 6, y: y(v) + 4, 'text-anchor': 'end' }, num(v))))
  const bars = series.days.map((d, i) => {
    let base = 0
    const parts = d.values.map((v, k) => {
      const rect = svg('rect', { x: LEFT + i * slot + 1, width: Math.max(slot - 2, 1), y: y(base + v), height: y(base) - y(base + v), class: series.kinds[k]?.className ?? '' })
      base += v
      return rect
    })
    const tip = series.kinds.length === 1 ? num(d.values[0] ?? 0) : series.kinds.map((k, j) => `${k.label} ${num(d.values[j] ?? 0)}`).join(', ')
    return svg('g', {}, svg('title', {}, `${day(d.date)}: ${tip}`), ...parts)
  })
  // A date under the first bar and every 30 days after it.
  const ticks = series.days.flatMap((d, i) => (i % 30 === 0 ? [svg('text', { x: LEFT + i * slot, y: H - 8, class: 'tick' }, d.date)] : []))
  const figureId = uid('chart')
  const image = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${figureId}-title ${figureId}-summary`, class: 'chart' },
    ...grid, ...bars, ...ticks)
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

/** The chart's numbers as a table, days that have any (a screen reader's and a spreadsheet's view). */
function numbers(title: string, series: Series): HTMLElement {
  const rows = series.days.filter((d) => d.values.some((v) => v > 0))
  return h('details', { class: 'chart-numbers' },
    h('summary', null, t('admin.showNumbers')),
    rows.length === 0
      ? h('p', { class: 'muted' }, t('admin.noResults'))
      : h('table', null,
        h('caption', { class: 'visually-hidden' }, title),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, t('admin.date')),
          series.kinds.map((k) => h('th', { scope: 'col' }, k.label)))),
        h('tbody', null, rows.map((d) => h('tr', null, h('th', { scope: 'row' }, day(d.date)), d.values.map((v) => h('td', null, num(v))))))))
}
