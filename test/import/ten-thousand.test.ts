/**
 * Issue 18, "must show": an import of 10,000 subscriptions from a generated file, then every
 * imported subscription id answers through the customer API (`GET /api/v1/subscriptions/:id`,
 * real HTTP) with the imported key of its customer and the imported values: dates, counters,
 * states, payment, addresses, line items and timestamps.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, startTestServer } from '../helpers/server.ts'
import { allInserted, generateImport } from './generate.ts'

const N = 10_000
const CLIENTS = 16

test(`${N.toLocaleString('en')} imported subscriptions each answer GET /api/v1/subscriptions/:id with their customer's imported key and values`, async (t) => {
  const server = await startTestServer(t)
  const g = generateImport(N)
  const body = g.lines.join('\n')
  const res = await server.request('POST', '/admin/api/v1/imports', { key: ADMIN_TOKEN, raw: body, headers: { 'content-type': 'application/x-ndjson' } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, allInserted(g))

  let next = 0
  let checked = 0
  const client = async (): Promise<void> => {
    while (next < g.subscriptions.length) {
      const expected = g.subscriptions[next++]!
      const got = await server.request('GET', `/api/v1/subscriptions/${expected.id}`, { key: g.keys.get(expected.user_id) })
      assert.equal(got.status, 200, `subscription ${expected.id}: ${got.text}`)
      assert.deepEqual(got.body, expected, `subscription ${expected.id}`)
      checked++
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, client))
  assert.equal(checked, N)
})
