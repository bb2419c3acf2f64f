/** The offsets the overview places outcomes on local days with (src/admin/zone-offsets.ts). */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { offsetMinutes, offsetSegments } from '../../src/admin/zone-offsets.ts'

const ms = (iso: string): number => Date.parse(iso)

test('offsetMinutes: whole hours, half hours, and either side of summer time', () => {
  assert.equal(offsetMinutes('UTC', ms('2026-03-08T12:00:00Z')), 0)
  assert.equal(offsetMinutes('Asia/Kolkata', ms('2026-03-08T12:00:00Z')), 330)
  assert.equal(offsetMinutes('America/St_Johns', ms('2026-01-08T12:00:00Z')), -210)
  assert.equal(offsetMinutes('America/New_York', ms('2026-03-08T06:59:00Z')), -300)
  assert.equal(offsetMinutes('America/New_York', ms('2026-03-08T07:00:00Z')), -240)
})

test('offsetSegments: one segment without a change; a new one at the exact minute of each change', () => {
  assert.deepEqual(offsetSegments('Asia/Kolkata', ms('2026-01-01T00:00:00Z'), ms('2026-03-31T00:00:00Z')), [
    { from: '2026-01-01T00:00:00.000Z', offset_minutes: 330 },
  ])
  // New York: summer time from 2026-03-08 07:00Z to 2026-11-01 06:00Z.
  assert.deepEqual(offsetSegments('America/New_York', ms('2026-02-20T13:17:42Z'), ms('2026-11-20T00:00:00Z')), [
    { from: '2026-02-20T13:17:00.000Z', offset_minutes: -300 },
    { from: '2026-03-08T07:00:00.000Z', offset_minutes: -240 },
    { from: '2026-11-01T06:00:00.000Z', offset_minutes: -300 },
  ])
  // A change in the last, partial day of the range is found too.
  assert.deepEqual(offsetSegments('Europe/Berlin', ms('2026-03-28T05:00:00Z'), ms('2026-03-29T01:00:30Z')).map((s) => s.from), [
    '2026-03-28T05:00:00.000Z', '2026-03-29T01:00:00.000Z',
  ])
})
