/**
 * A strict reader of the Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format), and a lint of
 * the naming conventions (https://prometheus.io/docs/practices/naming/) that `promtool check
 * metrics` enforces. Written for tests, so /metrics can be checked whole without promtool: every
 * rule broken is an error naming its line.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
  readonly line: number
}

export interface Family {
  readonly name: string
  type: MetricType
  help: string | undefined
  readonly samples: Sample[]
}

export class PromTextError extends Error {
  override readonly name = 'PromTextError'
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES: readonly string[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped']
/** What Go's strconv.ParseFloat (which Prometheus uses) accepts: decimal floats, Inf and NaN in any case. */
const FLOAT = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity)|nan)$/i

/** Parses the whole text; throws PromTextError at the first line that breaks the format. */
export function parsePromText(text: string): Family[] {
  if (text.length > 0 && !text.endsWith('\n')) throw new PromTextError('the last line must end with a newline')
  const families = new Map<string, Family>()
  const typed = new Set<string>()
  const series = new Set<string>()
  let current: Family | undefined
  const fail = (line: number, what: string): never => {
    throw new PromTextError(`line ${line}: ${what}`)
  }
  // A family's lines form one group: once another family has begun, it may not come back.
  const enter = (name: string, line: number): Family => {
    let family = families.get(name)
    if (family && family !== current) fail(line, `${name} appears again after other metrics: a family's lines must be one group`)
    if (!family) families.set(name, (family = { name, type: 'untyped', help: undefined, samples: [] }))
    current = family
    return family
  }

  const lines = text.split('\n')
  lines.pop() // after the final newline
  lines.forEach((raw, index) => {
    const line = index + 1
    if (/^[ \t]*$/.test(raw)) return
    if (/^[ \t]*#/.test(raw)) {
      if (!/^[ \t]*#[ \t]+(HELP|TYPE)(?:[ \t]|$)/.test(raw)) return // any other comment
      const m = /^[ \t]*#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(raw)
      if (!m) return fail(line, `a HELP or TYPE line without a metric name`)
      const [, keyword, name = '', rest = ''] = m
      if (!METRIC_NAME.test(name)) fail(line, `bad metric name ${JSON.stringify(name)}`)
      const family = enter(name, line)
      if (family.samples.length > 0) fail(line, `${keyword} for ${name} after its samples`)
      if (keyword === 'HELP') {
        if (family.help !== undefined) fail(line, `a second HELP for ${name}`)
        family.help = unescapeHelp(rest, line)
      } else {
        if (typed.has(name)) fail(line, `a second TYPE for ${name}`)
        if (!TYPES.includes(rest.trim())) fail(line, `unknown type ${JSON.stringify(rest)} for ${name}`)
        family.type = rest.trim() as MetricType
        typed.add(name)
      }
      return
    }
    const sample = parseSample(raw, line, fail)
    const family = enter(familyOf(sample.name, families), line)
    checkSampleName(family, sample, fail)
    const key = `${sample.name}{${Object.keys(sample.labels).sort().map((k) => `${k}=${JSON.stringify(sample.labels[k])}`).join(',')}}`
    if (series.has(key)) fail(line, `duplicate series ${key}`)
    series.add(key)
    family.samples.push(sample)
  })
  const result = [...families.values()]
  for (const family of result) checkFamily(family)
  return result
}

/**
 * The family a sample belongs to: `x_bucket`, `x_sum` and `x_count` are histogram `x`'s (`x_sum`
 * and `x_count` summary `x`'s); any other name is a family of its own.
 */
function familyOf(name: string, families: Map<string, Family>): string {
  const m = /^(.+)_(bucket|sum|count)$/.exec(name)
  const type = m ? families.get(m[1] as string)?.type : undefined
  return type === 'histogram' || (type === 'summary' && m?.[2] !== 'bucket') ? (m?.[1] as string) : name
}

function parseSample(raw: string, line: number, fail: (line: number, what: string) => never): Sample {
  const m = /^[ \t]*([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(raw)
  if (!m) return fail(line, `not a sample, a HELP or a TYPE line: ${JSON.stringify(raw)}`)
  const name = m[1] as string
  let i = m[0].length
  const labels: Record<string, string> = {}
  if (raw[i] === '{') {
    i++
    for (;;) {
      while (raw[i] === ' ' || raw[i] === '\t') i++
      if (raw[i] === '}') break
      const ln = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(raw.slice(i))
      if (!ln) fail(line, `bad label name at ${JSON.stringify(raw.slice(i, i + 20))}`)
      const labelName = (ln as RegExpExecArray)[0]
      if (labelName.startsWith('__')) fail(line, `label name ${labelName} is reserved (starts with __)`)
      if (labelName in labels) fail(line, `label ${labelName} given twice`)
      i += labelName.length
      while (raw[i] === ' ' || raw[i] === '\t') i++
      if (raw[i] !== '=') fail(line, `expected = after label ${labelName}`)
      i++
      while (raw[i] === ' ' || raw[i] === '\t') i++
      if (raw[i] !== '"') fail(line, `label ${labelName}'s value must be in double quotes`)
      i++
      let value = ''
      for (;;) {
        const c = raw[i]
        if (c === undefined) fail(line, `label ${labelName}'s value is not closed`)
        if (c === '"') break
        if (c === '\\') {
          const next = raw[i + 1]
          if (next === '\\' || next === '"') value += next
          else if (next === 'n') value += '\n'
          else fail(line, `bad escape \\${next ?? ''} in label ${labelName}'s value`)
          i += 2
        } else {
          value += c
          i++
        }
      }
      i++
      labels[labelName] = value
      while (raw[i] === ' ' || raw[i] === '\t') i++
      if (raw[i] === ',') {
        i++
        continue
      }
      if (raw[i] !== '}') fail(line, `expected , or } after label ${labelName}`)
      break
    }
    i++
  }
  const rest = raw.slice(i)
  const parts = /^[ \t]+(\S+)(?:[ \t]+(\S+))?[ \t]*$/.exec(rest)
  if (!parts) return fail(line, `expected a value (and an optional timestamp) after ${name}, got ${JSON.stringify(rest)}`)
  const [, valueText = '', timestamp] = parts
  if (!FLOAT.test(valueText)) fail(line, `value ${JSON.stringify(valueText)} is not a float`)
  if (timestamp !== undefined && !/^-?\d+$/.test(timestamp)) fail(line, `timestamp ${JSON.stringify(timestamp)} is not an integer`)
  return { name, labels, value: parseGoFloat(valueText), line }
}

function parseGoFloat(text: string): number {
  const t = text.toLowerCase().replace(/^\+/, '')
  if (/^-?inf(inity)?$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity
  if (t === 'nan') return NaN
  return Number(t)
}

/** HELP text escapes only backslash and newline. */
function unescapeHelp(text: string, line: number): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === '\\') return '\\'
    if (c === 'n') return '\n'
    throw new PromTextError(`line ${line}: bad escape \\${c} in HELP text`)
  })
}

function checkSampleName(family: Family, sample: Sample, fail: (line: number, what: string) => never): void {
  const suffix = sample.name.slice(family.name.length)
  if (family.type === 'histogram') {
    if (!['_bucket', '_sum', '_count'].includes(suffix)) fail(sample.line, `histogram ${family.name} has a sample ${sample.name}`)
    if (suffix === '_bucket' && sample.labels['le'] === undefined) fail(sample.line, `bucket of ${family.name} without le`)
    if (suffix !== '_bucket' && sample.labels['le'] !== undefined) fail(sample.line, `${sample.name} has an le label`)
  } else if (family.type === 'summary') {
    if (!['', '_sum', '_count'].includes(suffix)) fail(sample.line, `summary ${family.name} has a sample ${sample.name}`)
    if (suffix === '' && sample.labels['quantile'] === undefined) fail(sample.line, `sample of summary ${family.name} without quantile`)
  }
}

/** A histogram's buckets, per label set: increasing bounds, cumulative counts, +Inf equal to _count, and a _sum. */
function checkFamily(family: Family): void {
  if (family.type !== 'histogram') return
  const groups = new Map<string, { buckets: [number, number, number][]; sum?: number; count?: Sample }>()
  for (const s of family.samples) {
    const rest = Object.keys(s.labels).filter((k) => k !== 'le').sort().map((k) => `${k}=${JSON.stringify(s.labels[k])}`).join(',')
    let g = groups.get(rest)
    if (!g) groups.set(rest, (g = { buckets: [] }))
    if (s.name.endsWith('_bucket')) {
      const le = s.labels['le'] as string
      if (!FLOAT.test(le)) throw new PromTextError(`line ${s.line}: le ${JSON.stringify(le)} is not a float`)
      g.buckets.push([parseGoFloat(le), s.value, s.line])
    } else if (s.name.endsWith('_sum')) g.sum = s.value
    else g.count = s
  }
  for (const [labels, g] of groups) {
    const where = `${family.name}{${labels}}`
    for (let i = 1; i < g.buckets.length; i++) {
      const [le, n, line] = g.buckets[i] as [number, number, number]
      const [prevLe, prevN] = g.buckets[i - 1] as [number, number, number]
      if (!(le > prevLe)) throw new PromTextError(`line ${line}: ${where}: bucket bounds must increase (${prevLe} then ${le})`)
      if (n < prevN) throw new PromTextError(`line ${line}: ${where}: buckets must be cumulative (${prevN} then ${n})`)
    }
    const last = g.buckets[g.buckets.length - 1]
    if (!last || last[0] !== Infinity) throw new PromTextError(`${where}: no le="+Inf" bucket`)
    if (g.count === undefined) throw new PromTextError(`${where}: no _count`)
    if (g.count.value !== last[1]) throw new PromTextError(`line ${g.count.line}: ${where}: _count ${g.count.value} differs from the +Inf bucket ${last[1]}`)
    if (g.sum === undefined) throw new PromTextError(`${where}: no _sum`)
  }
}

/** Units that are not base units, and abbreviations (https://prometheus.io/docs/practices/naming/#base-units). */
const NOT_BASE_UNITS = ['milliseconds', 'microseconds', 'nanoseconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'years',
  'kilobytes', 'megabytes', 'gigabytes', 'kibibytes', 'mebibytes', 'gibibytes', 'bits', 'percent', 'celsius', 'fahrenheit',
  'ms', 'us', 'ns', 'sec', 'secs', 'min', 'mins', 'hrs', 'kb', 'mb', 'gb']
const TYPE_WORDS = ['counter', 'gauge', 'histogram', 'summary']

/**
 * The naming conventions promtool's lint checks, one message per problem: HELP on every family,
 * snake_case names without `:` (reserved for recording rules), base units, `_total` on counters
 * and only on counters, no type in the name.
 */
export function lintPromFamilies(families: readonly Family[]): string[] {
  const problems: string[] = []
  for (const f of families) {
    const words = f.name.split('_')
    if (f.help === undefined || f.help.trim() === '') problems.push(`${f.name}: no HELP text`)
    if (f.type === 'untyped') problems.push(`${f.name}: no TYPE`)
    if (/[A-Z]/.test(f.name)) problems.push(`${f.name}: not snake_case`)
    if (f.name.includes(':')) problems.push(`${f.name}: ':' is for recording rules`)
    for (const unit of NOT_BASE_UNITS) if (words.includes(unit)) problems.push(`${f.name}: use a base unit (seconds, bytes, ratio) instead of "${unit}"`)
    for (const type of TYPE_WORDS) if (words.includes(type)) problems.push(`${f.name}: the type "${type}" is in the name`)
    if (f.type === 'counter' && !f.name.endsWith('_total')) problems.push(`${f.name}: a counter's name ends in _total`)
    if (f.type !== 'counter' && f.name.endsWith('_total')) problems.push(`${f.name}: only counters end in _total`)
    for (const s of f.samples) {
      for (const label of Object.keys(s.labels)) if (/[A-Z]/.test(label)) problems.push(`${f.name}: label ${label} is not snake_case`)
      if ((f.type === 'counter' || f.type === 'histogram') && !(s.value >= 0)) problems.push(`${s.name}: a ${f.type} counts up from 0, got ${s.value}`)
    }
  }
  return [...new Set(problems)]
}
