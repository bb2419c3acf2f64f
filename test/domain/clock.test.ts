import { test } from 'node:test'
import assert from 'node:assert/strict'
import { serviceClock } from '../../src/clock.ts'
import { loadConfig, ConfigError } from '../../src/config.ts'

const real = (iso: string) => (): Date => new Date(iso)

test('serviceClock without REPLENISH_TODAY: now is real time, today is its date in the configured zone', () => {
  const clock = serviceClock('America/New_York', undefined, real('2026-03-01T03:00:00.000Z'))
  assert.equal(clock.now().toISOString(), '2026-03-01T03:00:00.000Z')
  assert.equal(clock.today(), '2026-02-28')
  assert.equal(serviceClock('UTC', undefined, real('2026-03-01T03:00:00.000Z')).today(), '2026-03-01')
  assert.equal(serviceClock('Asia/Tokyo', undefined, real('2026-02-28T15:00:00.000Z')).today(), '2026-03-01')
})

test('serviceClock with REPLENISH_TODAY: that date at the real time of day, whatever the zone', () => {
  const clock = serviceClock('Pacific/Kiritimati', '2026-01-31', real('2026-07-04T13:14:15.678Z'))
  assert.equal(clock.now().toISOString(), '2026-01-31T13:14:15.678Z')
  assert.equal(clock.today(), '2026-01-31')
  // Late in the UTC day the zone would already be on the next date: REPLENISH_TODAY still wins.
  assert.equal(serviceClock('Pacific/Kiritimati', '2026-01-31', real('2026-07-04T23:59:59.999Z')).today(), '2026-01-31')
})

test('the clock follows real time as it moves (no date is cached)', () => {
  let t = new Date('2026-01-31T23:59:59.000Z')
  const clock = serviceClock('UTC', undefined, () => t)
  assert.equal(clock.today(), '2026-01-31')
  t = new Date('2026-02-01T00:00:01.000Z')
  assert.equal(clock.today(), '2026-02-01')
})

test('REPLENISH_TIME_ZONE must be an IANA zone and REPLENISH_TODAY a real date', () => {
  assert.equal(loadConfig({}, { REPLENISH_TIME_ZONE: 'Europe/Paris' }).timeZone, 'Europe/Paris')
  assert.equal(loadConfig({}, {}).timeZone, 'UTC')
  assert.throws(() => loadConfig({}, { REPLENISH_TIME_ZONE: 'Mars/Olympus_Mons' }), (err: unknown) =>
    err instanceof ConfigError && err.message === 'REPLENISH_TIME_ZONE: expected an IANA time zone such as UTC or Europe/Paris, got "Mars/Olympus_Mons"')
  assert.throws(() => loadConfig({}, { REPLENISH_TODAY: '2026-02-30' }), ConfigError)
  assert.equal(loadConfig({}, { REPLENISH_TODAY: '2028-02-29' }).today, '2028-02-29')
})
