/**
 * An RFC 4180 reader for the tests of the CSV exports (C18): records end with CRLF, a quoted
 * field may hold commas, quotes (doubled) and line breaks. Strict: a record that does not end
 * with CRLF, or text after a closing quote, throws, so a test fails on a malformed file.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let i = 0
  while (i < text.length) {
    let field = ''
    if (text[i] === '"') {
      i++
      for (;;) {
        const quote = text.indexOf('"', i)
        if (quote === -1) throw new Error(`an unclosed quoted field at ${i}`)
        field += text.slice(i, quote)
        if (text[quote + 1] === '"') {
          field += '"'
          i = quote + 2
        } else {
          i = quote + 1
          break
        }
      }
    } else {
      const end = text.slice(i).search(/[,\r\n"]/)
      const stop = end === -1 ? text.length : i + end
      if (text[stop] === '"') throw new Error(`a quote inside an unquoted field at ${stop}`)
      field = text.slice(i, stop)
      i = stop
    }
    record.push(field)
    if (text[i] === ',') {
      i++
      continue
    }
    if (text.startsWith('\r\n', i)) {
      records.push(record)
      record = []
      i += 2
      continue
    }
    throw new Error(`expected a comma or CRLF at ${i}, found ${JSON.stringify(text.slice(i, i + 10))}`)
  }
  if (record.length > 0) throw new Error('the last record does not end with CRLF')
  return records
}

/** The records after the header, as objects keyed by the header's names. */
export function csvObjects(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [header = [], ...records] = parseCsv(text)
  for (const r of records) if (r.length !== header.length) throw new Error(`a record of ${r.length} fields under a header of ${header.length}`)
  return { header, rows: records.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] as string]))) }
}
