import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openTestStore } from '../helpers/store.ts'

// The turn's reads themselves are tested through the API in test/api/read-cache.test.ts: that
// a commit between two of them shows in both, and that a running unit is waited for.

test('reads waiting for their turn when the store closes fail, and nothing is thrown at the event loop', async (t) => {
  const { store } = await openTestStore(t)
  const uncaught: unknown[] = []
  const note = (err: unknown): void => void uncaught.push(err)
  process.on('uncaughtException', note)
  t.after(() => process.off('uncaughtException', note))
  const body = store.subscriptions.findJson(1)
  const page = store.subscriptions.pageOfUser(1, undefined, 0, 10)
  await store.close()
  await assert.rejects(body, /not open|closed/i)
  await assert.rejects(page, /not open|closed/i)
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(uncaught, [])
})

test('a turn answers every GET of a body but at most 8 customers\' pages; the pages left are answered in the next turns, in order', async (t) => {
  const { store } = await openTestStore(t)
  const settled: string[] = []
  const pages = Array.from({ length: 20 }, (_, i) => store.subscriptions.pageOfUser(1, undefined, i, 10).then(() => settled.push(`page ${i}`)))
  const bodies = Array.from({ length: 3 }, (_, i) => store.subscriptions.findJson(i + 1).then(() => settled.push(`body ${i}`)))
  // The turn's reads run in the check phase; this callback runs after them and their continuations.
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(settled, [...Array.from({ length: 8 }, (_, i) => `page ${i}`), 'body 0', 'body 1', 'body 2'])
  await Promise.all([...pages, ...bodies])
  assert.deepEqual(settled.slice(11), Array.from({ length: 12 }, (_, i) => `page ${i + 8}`))
})
