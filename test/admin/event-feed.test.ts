/**
 * The events feed (C10): read in pages of 7 while writes run concurrently, it returns every event
 * exactly once, in id order (issue 17's must-show).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer } from '../helpers/server.ts'

// How much overlap the test needs: pages read while writes ran, and writes made while pages were
// read. The writers and the reader stop on both counts, not on one of them: how fast each side
// goes depends on the backend and on how busy the machine is (a cap on writes alone, or on pages
// alone, let one side finish before the other had done enough).
const PAGES = 150
const WRITES = 200

test('pages of 7 read during concurrent writes return every event exactly once', async (t) => {
  const server = await startTestServer(t)
  const users = await Promise.all([1, 2, 3, 4].map(() => seedUser(server.store)))
  let writing = true
  let writes = 0
  const writers = users.map(async (user) => {
    const sub = await createSubscription(server, user.key)
    // Every write changes interval_length (1 → 2 → … → 5 → 1), so each one is an event.
    for (let i = 1; writing; i++) {
      const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: user.key, json: { subscription: { interval_length: (i % 5) + 1 } } })
      assert.equal(res.status, 200)
      writes++
    }
  })
  let done = false
  // A failed write ends the writers too (and fails the test below), or the reader would wait forever.
  const finished = Promise.all(writers).finally(() => {
    done = true
  })
  finished.catch(() => {})
  const seen: number[] = []
  let after = 0
  let pagesDuringWrites = 0
  // The reader's own failure stops the writers too.
  try {
    for (;;) {
      // Taken before the read: an empty page read after the writers finished is the end of the feed.
      const writersDone = done
      const res = await server.request('GET', `/admin/api/v1/events?limit=7&after=${after}`, { key: ADMIN_TOKEN })
      assert.equal(res.status, 200)
      const ids = res.body.events.map((e: any) => e.id as number)
      assert.ok(ids.length <= 7)
      if (!writersDone) pagesDuringWrites++
      seen.push(...ids)
      assert.ok(seen.length <= 20_000, 'the feed keeps answering events it already gave')
      if (ids.length > 0) after = ids[ids.length - 1]
      if (ids.length === 0 && writersDone) break
      if (pagesDuringWrites >= PAGES && writes >= WRITES) writing = false
    }
  } finally {
    writing = false
  }
  await finished
  assert.ok(pagesDuringWrites >= PAGES, `only ${pagesDuringWrites} pages were read while writes ran`)
  const all = (await server.store.events.feed(0, 1_000_000, undefined)).map((e) => e.id)
  assert.ok(all.length >= WRITES, `only ${all.length} events were written`)
  assert.deepEqual(seen, all)
  assert.equal(new Set(seen).size, seen.length)
})
