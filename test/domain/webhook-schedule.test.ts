/**
 * C10's retry schedule (src/domain/webhook-schedule.ts): the first retry after the base, then ×6
 * each time, within ±20 %, never more than 24 h; failed once the next attempt would fall more than
 * 3 days after the delivery was made; a receiver has 10 s.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DELIVERY_TIMEOUT_MS, afterFailure, retryDelayMs } from '../../src/domain/webhook-schedule.ts'

const S = 1000
const H = 3600 * S
const DAY = 24 * H

test('nominal delays: base, then six times longer each time (random 0.5 is the middle of the jitter)', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, 10, 0.5)), [10 * S, 60 * S, 360 * S, 2160 * S, 12960 * S, 77760 * S])
  assert.equal(retryDelayMs(1, 1, 0.5), 1 * S)
  assert.equal(retryDelayMs(2, 1, 0.5), 6 * S)
})

test('jitter stays within ±20 % of the nominal delay, at both ends of the draw', () => {
  for (const n of [1, 2, 3, 4]) {
    const nominal = retryDelayMs(n, 10, 0.5)
    assert.equal(retryDelayMs(n, 10, 0), Math.round(nominal * 0.8))
    assert.ok(retryDelayMs(n, 10, 0.999999) <= Math.round(nominal * 1.2))
    assert.ok(retryDelayMs(n, 10, 0.999999) > Math.round(nominal * 1.19))
  }
})

test('no delay is longer than 24 h, jitter included', () => {
  for (const n of [7, 8, 12, 40]) {
    assert.equal(retryDelayMs(n, 10, 0.999999), DAY)
    assert.equal(retryDelayMs(n, 10, 0.5), DAY)
    assert.equal(retryDelayMs(n, 10, 0), Math.round(DAY * 0.8))
  }
})

test('a failure schedules the next attempt while it falls within 3 days of the delivery; after that it is failed', () => {
  const createdMs = 1_000_000
  assert.deepEqual(afterFailure({ createdMs, failures: 1, nowMs: createdMs + S, baseSeconds: 10, random: 0.5 }), { state: 'pending', dueMs: createdMs + 11 * S })
  // 2 days 23 h in, the next nominal delay (24 h) would land past the 3 days.
  assert.deepEqual(afterFailure({ createdMs, failures: 8, nowMs: createdMs + 3 * DAY - H, baseSeconds: 10, random: 0.5 }), { state: 'failed' })
  // The same failure a day earlier still gets its retry.
  assert.deepEqual(afterFailure({ createdMs, failures: 8, nowMs: createdMs + 2 * DAY - H, baseSeconds: 10, random: 0.5 }), { state: 'pending', dueMs: createdMs + 3 * DAY - H })
})

test('a receiver has 10 s to answer', () => {
  assert.equal(DELIVERY_TIMEOUT_MS, 10 * S)
})
