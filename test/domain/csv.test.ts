/** C18's CSV cells (src/domain/csv.ts): RFC 4180 quoting and the formula-injection guard. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { csvCell, csvHeader, csvRecords, type Cell, type Column } from '../../src/domain/csv.ts'

test('cells: null empty, numbers and booleans as written, text quoted only when it must be', () => {
  const cases: [Cell, string][] = [
    [null, ''],
    ['', ''],
    [0, '0'],
    [-12, '-12'],
    [1.5, '1.5'],
    [Number.NaN, ''],
    [true, 'true'],
    [false, 'false'],
    ['plain text', 'plain text'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\rhere', '"cr\rhere"'],
    ['ünïcödé ✓', 'ünïcödé ✓'],
    ["it's", "it's"],
  ]
  for (const [value, written] of cases) assert.equal(csvCell(value), written, JSON.stringify(value))
})

test("formula injection: text beginning with = + - @ tab or CR gets a ' in front (then quoted if it must be); a number never", () => {
  const cases: [Cell, string][] = [
    ['=1+1', "'=1+1"],
    ['+33 1 23', "'+33 1 23"],
    ['-5', "'-5"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', `"'\r=1"`],
    ['=HYPERLINK("x","y")', `"'=HYPERLINK(""x"",""y"")"`],
    ['a=1', 'a=1'],
    [-5, '-5'],
    [{ decimal: '-4.50' }, '-4.50'],
    [{ decimal: '12' }, '12'],
    [{ decimal: '=1+1' }, "'=1+1"],
  ]
  for (const [value, written] of cases) assert.equal(csvCell(value), written, JSON.stringify(value))
})

test('a header and records, each ended by CRLF; adding a column is one entry of the table', () => {
  const columns: Column<{ id: number; name: string | null }>[] = [['id', (r) => r.id], ['name', (r) => r.name]]
  assert.equal(csvHeader(columns), 'id,name\r\n')
  assert.equal(csvRecords(columns, [{ id: 1, name: 'a, b' }, { id: 2, name: null }]), '1,"a, b"\r\n2,\r\n')
  assert.equal(csvRecords(columns, []), '')
})
