import { test } from 'node:test'
import assert from 'node:assert/strict'
import { serviceClock } from '../src/clock.ts'

// today() remembers its answer for the current second (an Intl formatting per write was 2 µs of a
// skip); the date must still change at the exact millisecond of midnight in the configured zone.
test('today() changes at midnight in its zone to the millisecond, though it is remembered per second', () => {
  let now = Date.parse('2026-03-14T10:59:59.000Z') // 23:59:59.000 in Auckland (UTC+13 in March)
  const clock = serviceClock('Pacific/Auckland', undefined, () => new Date(now))
  assert.equal(clock.today(), '2026-03-14')
  now += 999 // 23:59:59.999
  assert.equal(clock.today(), '2026-03-14')
  now += 1 // 00:00:00.000
  assert.equal(clock.today(), '2026-03-15')
  now -= 1 // a clock stepped back a millisecond: the earlier date again, not a remembered one
  assert.equal(clock.today(), '2026-03-14')
})

test('with REPLENISH_TODAY, today() is that date at any time', () => {
  const clock = serviceClock('UTC', '2026-02-28', () => new Date('2026-11-22T23:59:59.999Z'))
  assert.equal(clock.today(), '2026-02-28')
  assert.equal(clock.now().toISOString(), '2026-02-28T23:59:59.999Z')
})
