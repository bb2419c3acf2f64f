/**
 * An endpoint's places for requests in flight (issue 25, slots.ts), on a clock the test moves: a
 * request left unanswered stops holding a place once it has taken far longer than the receiver
 * usually does, but keeps its socket, and the socket share bounds the stalled ones; a receiver
 * slow on every request stalls nothing.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MIN_STALL_MS, Slots, STALL_FACTOR } from '../../../src/processing/webhooks/slots.ts'

const TIMEOUT = 10_000

test('a hanging request frees its place once it outlives the receiver\'s usual time by STALL_FACTOR, and keeps its socket', () => {
  const slots = new Slots(1, TIMEOUT)
  // The receiver answers in 20 ms: a request stalls after STALL_FACTOR × 20 ms.
  const quick = slots.start(0)
  assert.equal(slots.free(1, 100), false, 'the one place is taken')
  slots.finish(quick, 20, true)
  const stall = STALL_FACTOR * 20
  assert.equal(slots.stallMs, stall)

  const hanging = slots.start(100)
  assert.equal(slots.free(100 + stall - 1, 100), false, 'not yet stalled')
  assert.equal(slots.nextStallInMs(100 + stall - 1, 100), 1)
  assert.equal(slots.free(100 + stall, 100), true, 'stalled: another may start')
  assert.equal(hanging.stalled, true)
  assert.deepEqual([slots.inFlight, slots.active], [1, 0], 'it still holds a socket')

  const next = slots.start(100 + stall)
  slots.finish(next, 110 + stall, true)
  slots.finish(hanging, 10_100, false) // timed out: not an answer, its 10 s do not count
  assert.deepEqual([slots.inFlight, slots.active], [0, 0])
  assert.ok(slots.stallMs < stall + STALL_FACTOR, `${slots.stallMs} ms`)
})

test('stalled requests are bounded by the socket share', () => {
  const slots = new Slots(2, TIMEOUT)
  const share = 5
  let now = 0
  for (let i = 0; i < 5; i++) {
    assert.equal(slots.free(now, share), true, `request ${i + 1}`)
    slots.start(now)
    now += 2_000 // long past any stall threshold: every request so far is stalled
  }
  assert.equal(slots.free(now, share), false, 'five sockets held: the share is spent')
  assert.deepEqual([slots.inFlight, slots.active], [5, 0], 'all of them stalled')
  assert.equal(slots.nextStallInMs(now, share), undefined, 'no timer: only an ending request frees a socket')
  assert.equal(slots.free(now, 6), true, 'a larger share (fewer endpoints) lets one more go')
})

test('a receiver slow on every request stalls nothing: it gets `concurrency` requests and no more', () => {
  const slots = new Slots(2, TIMEOUT)
  let now = 0
  for (let i = 0; i < 20; i++) {
    const a = slots.start(now)
    const b = slots.start(now)
    now += 800
    slots.finish(a, now, true)
    slots.finish(b, now, true)
  }
  assert.equal(slots.stallMs, STALL_FACTOR * 800)
  slots.start(now)
  slots.start(now)
  assert.equal(slots.free(now + STALL_FACTOR * 800 - 1, 100), false, `requests at ${STALL_FACTOR} times the usual time are not stalled yet`)
  assert.equal(slots.stallMs <= TIMEOUT, true)
})

test('the threshold never drops below MIN_STALL_MS nor exceeds the time-out', () => {
  const fast = new Slots(1, TIMEOUT)
  fast.finish(fast.start(0), 1, true)
  assert.equal(fast.stallMs, MIN_STALL_MS)
  const slow = new Slots(1, 3_000)
  slow.finish(slow.start(0), 3_000 / STALL_FACTOR + 1, true)
  assert.equal(slow.stallMs, 3_000)
})
