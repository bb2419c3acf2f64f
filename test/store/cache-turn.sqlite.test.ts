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
  const bodies = [store.subscriptions.findJson(1), store.subscriptions.findJson(2)]
  await store.close()
  for (const body of bodies) await assert.rejects(body, /not open|closed/i)
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(uncaught, [])
})

