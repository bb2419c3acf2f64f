import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { ADMIN_TOKEN, request } from '../helpers/server.ts'
import { runCli, startServe, tempDir } from './harness.ts'

const KEY = 'imported-spree-key-0123456789'

async function seed(url: string): Promise<number> {
  const user = await request(url, 'POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, json: { user: { email: 'ann@example.com' } } })
  assert.equal(user.status, 201)
  const key = await request(url, 'POST', `/admin/api/v1/users/${user.body.id}/api_keys`, { key: ADMIN_TOKEN, json: { api_key: { key: KEY } } })
  assert.equal(key.status, 201)
  const item = await request(url, 'POST', '/admin/api/v1/subscribables', { key: ADMIN_TOKEN, json: { subscribable: { sku: 'COFFEE', name: 'Coffee' } } })
  assert.equal(item.status, 201)
  return item.body.id
}

const subscribe = (url: string, item: number, n: number) =>
  request(url, 'POST', '/api/v1/subscriptions', { key: KEY, json: { subscription: { interval_length: 1 + (n % 5), interval_units: 'week', line_items_attributes: [{ subscribable_id: item, quantity: 1 + (n % 3) }] } } })

test('backup makes a consistent copy while serve is writing, and a server on the copy serves the same data', async (t) => {
  const dir = tempDir(t)
  const db = join(dir, 'live.db')
  const copy = join(dir, 'copy.db')
  const env = { REPLENISH_DB: db, REPLENISH_ADMIN_TOKEN: ADMIN_TOKEN, REPLENISH_RATE_LIMIT: '0', REPLENISH_TODAY: '2026-03-01' }
  const live = await startServe(t, env)
  const item = await seed(live.url)
  for (let n = 0; n < 30; n++) assert.equal((await subscribe(live.url, item, n)).status, 200)

  // Writers keep going for the whole backup.
  let writing = true
  let written = 0
  const writers = Array.from({ length: 4 }, async (_, w) => {
    while (writing) {
      assert.equal((await subscribe(live.url, item, w)).status, 200)
      written++
    }
  })
  while (written < 8) await new Promise((resolve) => setTimeout(resolve, 5))
  const backup = await runCli(['backup', copy], { REPLENISH_DB: db })
  writing = false
  await Promise.all(writers)
  assert.deepEqual(backup, { status: 0, stdout: [`backup of ${db} written to ${copy}`], stderr: [] })
  assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('copy')), ['copy.db'], 'no partial file is left')

  // Consistent: whole transactions only (each subscription with its line item and its event).
  const raw = new DatabaseSync(copy, { readOnly: true })
  assert.deepEqual(raw.prepare('PRAGMA integrity_check').all().map((r) => ({ ...r })), [{ integrity_check: 'ok' }])
  const count = (sql: string): number => (raw.prepare(sql).get() as { n: number }).n
  const subscriptions = count('SELECT count(*) AS n FROM subscriptions')
  assert.ok(subscriptions >= 30)
  assert.equal(count('SELECT count(*) AS n FROM line_items'), subscriptions)
  assert.equal(count("SELECT count(*) AS n FROM events WHERE type = 'subscription.created'"), subscriptions)
  raw.close()

  // A server started on the copy answers as the original did, record for record.
  const restored = await startServe(t, { ...env, REPLENISH_DB: copy })
  const fromCopy = await request(restored.url, 'GET', '/api/v1/subscriptions?per_page=100', { key: KEY })
  assert.equal(fromCopy.status, 200)
  assert.equal(fromCopy.body.total_count, subscriptions)
  const fromLive = await request(live.url, 'GET', '/api/v1/subscriptions?per_page=100', { key: KEY })
  const liveById = new Map<number, unknown>(fromLive.body.subscriptions.map((s: { id: number }) => [s.id, s]))
  for (const s of fromCopy.body.subscriptions) assert.deepEqual(s, liveById.get(s.id))
  assert.equal((await request(restored.url, 'GET', '/admin/api/v1/users', { key: ADMIN_TOKEN })).body.users[0].email, 'ann@example.com')
})

test('a second backup to the same file is refused (status 2, the first kept) unless --force, which replaces it with a whole newer copy', async (t) => {
  const dir = tempDir(t)
  const db = join(dir, 'live.db')
  const copy = join(dir, 'copy.db')
  const env = { REPLENISH_DB: db, REPLENISH_ADMIN_TOKEN: ADMIN_TOKEN }
  const live = await startServe(t, env)
  const item = await seed(live.url)
  assert.equal((await subscribe(live.url, item, 0)).status, 200)
  assert.equal((await runCli(['backup', copy], { REPLENISH_DB: db })).status, 0)
  assert.equal((await subscribe(live.url, item, 1)).status, 200)
  const count = (): number => {
    const raw = new DatabaseSync(copy, { readOnly: true })
    try {
      return (raw.prepare('SELECT count(*) AS n FROM subscriptions').get() as { n: number }).n
    } finally {
      raw.close()
    }
  }
  // Issue 15 item 10: a backup used to overwrite whatever FILE named without a word.
  assert.deepEqual(await runCli(['backup', copy], { REPLENISH_DB: db }), {
    status: 2,
    stdout: [],
    stderr: [`replenish: cannot write the backup: ${copy} already exists; add --force to replace it`],
  })
  assert.equal(count(), 1)
  assert.deepEqual(readdirSync(dir).filter((f) => f.includes('partial')), [], 'no partial file is left')
  assert.deepEqual(await runCli(['backup', copy, '--force'], { REPLENISH_DB: db }), { status: 0, stdout: [`backup of ${db} written to ${copy}`], stderr: [] })
  assert.equal(count(), 2)
})

test('backup refuses the database itself, a missing directory and a directory as target (status 2)', async (t) => {
  const dir = tempDir(t)
  const db = join(dir, 'live.db')
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: db })).status, 0)
  const cases: [string, string][] = [
    [db, 'replenish: the backup cannot be the database itself'],
    [join(dir, 'nope', 'copy.db'), `replenish: cannot write the backup: the directory ${join(dir, 'nope')} does not exist`],
    [dir, `replenish: cannot write the backup: ${dir} is a directory`],
  ]
  for (const [target, line] of cases) {
    assert.deepEqual(await runCli(['backup', target], { REPLENISH_DB: db }), { status: 2, stdout: [], stderr: [line] })
  }
})
