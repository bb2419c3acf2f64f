import { test } from 'node:test'
import assert from 'node:assert/strict'
import { nowIso } from '../../src/store/sqlite/rows.ts'

// nowIso keeps its text for the current millisecond (a write asks up to three times): it must
// still answer exactly what `new Date().toISOString()` would, at every millisecond.
test('nowIso answers the current millisecond exactly, though it formats once per millisecond', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-22T23:59:59.998Z') })
  assert.equal(nowIso(), '2026-11-22T23:59:59.998Z')
  assert.equal(nowIso(), '2026-11-22T23:59:59.998Z')
  t.mock.timers.tick(1)
  assert.equal(nowIso(), '2026-11-22T23:59:59.999Z')
  t.mock.timers.tick(1)
  assert.equal(nowIso(), '2026-11-23T00:00:00.000Z')
  t.mock.timers.setTime(Date.parse('2026-11-22T10:00:00.000Z')) // a clock stepped back
  assert.equal(nowIso(), new Date().toISOString())
  assert.equal(nowIso(), '2026-11-22T10:00:00.000Z')
})
