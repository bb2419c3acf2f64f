/**
 * Requests before deliveries (pacer.ts): deliveries are held to a trickle only while the event
 * loop is saturated and requests are being answered; a loop busy with deliveries alone, or one
 * with slack, lets them all go.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadPacer } from '../../../src/processing/webhooks/pacer.ts'

/** Keeps the loop busy for `ms`, in slices that let timers run, counting a "request" per slice when asked. */
async function saturate(ms: number, onSlice: () => void): Promise<void> {
  const end = performance.now() + ms
  while (performance.now() < end) {
    const slice = performance.now() + 20
    while (performance.now() < slice) { /* the loop is busy */ }
    onSlice()
    await new Promise((resolve) => setImmediate(resolve))
  }
}

test('a saturated loop answering requests holds deliveries to the busy rate; slack lets them go at once', async () => {
  let answered = 0
  const pacer = loadPacer({ requestsAnswered: () => answered, sampleMs: 50, busyRate: 100 })
  try {
    assert.equal(pacer.delay(), 0)
    await saturate(300, () => answered++)
    assert.equal(pacer.busy, true)
    // A burst of at most a tenth of a second's worth, then one delivery per 10 ms.
    let allowed = 0
    while (pacer.delay() === 0 && allowed < 1000) allowed++
    assert.ok(allowed <= 10, `${allowed} deliveries allowed at once while busy`)
    const wait = pacer.delay()
    assert.ok(wait > 0 && wait <= 10, `wait ${wait} ms`)

    await new Promise((resolve) => setTimeout(resolve, 200)) // slack
    assert.equal(pacer.busy, false)
    for (let i = 0; i < 1000; i++) assert.equal(pacer.delay(), 0)
  } finally {
    pacer.stop()
  }
})

test('a loop saturated without requests (deliveries alone) is not held back', async () => {
  const pacer = loadPacer({ requestsAnswered: () => 0, sampleMs: 50 })
  try {
    await saturate(300, () => {})
    assert.equal(pacer.busy, false)
    assert.equal(pacer.delay(), 0)
  } finally {
    pacer.stop()
  }
})
