/**
 * Requests before deliveries (pacer.ts): deliveries are held to a trickle only while the event
 * loop is saturated and requests are being answered; a loop busy with deliveries alone, or one
 * with slack, lets them all go. The mails' pacer (requestPacer) holds them back whenever requests
 * are being answered.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadPacer, requestPacer } from '../../src/processing/pacer.ts'

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

test('requestPacer (the mails): a request answered holds them to its rate at once, however idle the loop; a quiet window lets them go', async () => {
  let answered = 0
  const pacer = requestPacer({ requestsAnswered: () => answered, rate: 50, windowMs: 100 })
  assert.equal(pacer.busy, false)
  for (let i = 0; i < 100; i++) assert.equal(pacer.delay(), 0, 'no request yet: full speed')
  answered++
  // No sample to wait for: the next ask already sees the request.
  assert.equal(pacer.busy, true)
  let allowed = 0
  while (pacer.delay() === 0 && allowed < 1000) allowed++
  assert.ok(allowed <= 5, `${allowed} mails allowed at once beside a request (a tenth of a second at 50/s)`)
  const wait = pacer.delay()
  assert.ok(wait > 0 && wait <= 20, `wait ${wait} ms: one mail per 20 ms`)
  await new Promise((resolve) => setTimeout(resolve, 150)) // no request for longer than the window
  assert.equal(pacer.busy, false)
  for (let i = 0; i < 1000; i++) assert.equal(pacer.delay(), 0)
})
