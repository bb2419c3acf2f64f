/**
 * `replenish copy --from FILE --to postgres://…` (C15): a SQLite database, made by a real `serve`
 * and `process` on SQLite, copied into an empty PostgreSQL one, ids kept; every table counted on
 * both sides. Then `serve` on the copy answers exactly what the SQLite one answered, the customer's
 * key still works, new rows get ids above the copied ones, and a subscription's event chain goes
 * on. Refused: a target that is not empty, a file of another schema version, bad arguments.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { copyFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { runCli, runCliBeside, startServe, tempDir, type CliRun } from './harness.ts'
import { request } from '../helpers/server.ts'
import { until } from '../helpers/wait.ts'
import { newTestLocation } from '../helpers/store.ts'
import { startSmtpSink, TEST_CA_FILE } from '../helpers/smtp.ts'
import { COPIED_TABLES } from '../../src/store/postgres/copy.ts'

const ADMIN = 'copy-admin-token-0123456789abcdef'
const ENV = { REPLENISH_ADMIN_TOKEN: ADMIN, REPLENISH_LOG: 'off', REPLENISH_TODAY: '2026-03-01', REPLENISH_RATE_LIMIT: '0' }
const A = '/admin/api/v1'

/** The month the rows are made in (real time): the monthly report's counts (C16) come over with the copy. */
const MONTH = new Date().toISOString().slice(0, 7)

/** What the SQLite server answered, to be answered again by the copy. */
interface Made {
  readonly key: string
  readonly rich: number
  readonly answers: ReadonlyMap<string, string>
}

/** Every table gets rows: catalog, a customer with a key, subscriptions, events, deliveries, installments with an attempt, portal rows, a mail sent. */
async function fillSqlite(t: TestContext, file: string): Promise<Made> {
  const sink = await startSmtpSink(t)
  const mail = { REPLENISH_SMTP_URL: sink.url(), REPLENISH_SMTP_CA_FILE: TEST_CA_FILE, REPLENISH_MAIL_FROM: 'shop@example.com', REPLENISH_PUBLIC_URL: 'https://shop.example' }
  const serve = await startServe(t, { ...ENV, ...mail, REPLENISH_DB: file })
  const admin = async (method: string, path: string, json?: object): Promise<any> => {
    const res = await request(serve.url, method, `${A}${path}`, { key: ADMIN, ...(json ? { json } : {}) })
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`)
    return res.body
  }
  // Nothing listens there: deliveries fail and are retried, so they carry attempts.
  await admin('POST', '/webhook_endpoints', { webhook_endpoint: { url: 'http://127.0.0.1:9/hooks', events: ['*'] } })
  await admin('POST', '/admin_tokens', { admin_token: { scope: 'read', label: 'reports' } })
  const method = await admin('POST', '/payment_methods', { payment_method: { name: 'Card' } })
  const coffee = await admin('POST', '/subscribables', { subscribable: { sku: 'COFFEE', name: 'Coffee', prices: { USD: '12.50', EUR: '11.90' }, discount_percent: '10' } })
  const tea = await admin('POST', '/subscribables', { subscribable: { sku: 'TEA', name: 'Tea', prices: { USD: '4.25' } } })
  const user = await admin('POST', '/users', { user: { email: 'ada@example.com' } })
  const { key } = await admin('POST', `/users/${user.id}/api_keys`)
  const source = await admin('POST', '/payment_sources', { payment_source: { user_id: user.id, payment_method_id: method.id } })
  const address = { firstname: 'Élodie "É" \\ ✓', lastname: null, company: null, address1: '1 Main St', address2: null, city: 'Paris', zipcode: '75001', state_name: null, country_iso: 'fr', phone: '+33 1' }
  const created = await request(serve.url, 'POST', '/api/v1/subscriptions', {
    key, headers: { 'idempotency-key': 'create-rich' },
    json: { subscription: {
      interval_length: 1, actionable_date: '2026-03-02', payment_method_id: method.id, payment_source_id: source.id,
      shipping_address_attributes: address, line_items_attributes: [{ subscribable_id: tea.id, quantity: 3 }, { subscribable_id: coffee.id, quantity: 1 }],
    } },
  })
  assert.equal(created.status, 200, created.text)
  const rich = created.body.id as number
  const bare = (await request(serve.url, 'POST', '/api/v1/subscriptions', { key, json: { subscription: { interval_length: 2 } } })).body.id as number
  assert.equal((await request(serve.url, 'POST', `/api/v1/subscriptions/${bare}/pause`, { key })).status, 200)
  const link = await admin('POST', `/users/${user.id}/portal_sessions`, { portal_session: {} })
  // REPLENISH_PUBLIC_URL (needed by mail) names no real host: the link is opened on this server.
  assert.equal((await fetch(link.url.replace('https://shop.example', serve.url), { redirect: 'manual' })).status, 303)

  const processed = await runCliBeside(t, ['process', '--as-of', '2026-03-02'], { ...ENV, ...mail, REPLENISH_DB: file })
  assert.equal(processed.status, 0, processed.stderr.join('\n'))
  const [installment] = (await admin('GET', `/installments?subscription_id=${rich}`)).installments
  await admin('POST', `/installments/${installment.id}/outcome`, { outcome: { result: 'fulfilled', order_reference: 'R-1' } })
  // A cancellation's mail, sent by serve (the outbox and its totals).
  assert.equal((await request(serve.url, 'POST', `/api/v1/subscriptions/${bare}/cancel`, { key })).status, 200)
  await sink.waitFor(1)
  await until('the mail recorded as sent', async () => (await admin('GET', '/emails')).emails[0]?.state === 'sent')

  const answers = new Map<string, string>()
  for (const [path, as] of [
    [`/api/v1/subscriptions/${rich}`, key], [`/api/v1/subscriptions/${bare}`, key], [`/api/v1/subscriptions`, key],
    [`${A}/subscriptions/${rich}/events`, ADMIN], [`${A}/events`, ADMIN], [`${A}/installments/${installment.id}`, ADMIN],
    [`${A}/users/${user.id}`, ADMIN], [`${A}/payment_sources/${source.id}`, ADMIN], [`${A}/subscribables/${coffee.id}`, ADMIN],
    [`${A}/reports/monthly?from=${MONTH}&to=${MONTH}`, ADMIN],
  ] as const) {
    const res = await request(serve.url, 'GET', path, { key: as })
    assert.equal(res.status, 200, `${path}: ${res.text}`)
    answers.set(path, res.text)
  }
  assert.equal(await serve.stop(), 0)
  return { key, rich, answers }
}

/** The count table's rows: table → [sqlite, postgres]. */
function countsOf(run: CliRun): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>()
  for (const line of run.stdout) {
    const m = /^(\w+)\s+(\d+)\s+(\d+)$/.exec(line)
    if (m) out.set(m[1]!, [Number(m[2]), Number(m[3])])
  }
  return out
}

test('copy brings every row with its id; serve on the copy answers as SQLite did, and goes on from there', async (t) => {
  const file = join(tempDir(t), 'r.db')
  const made = await fillSqlite(t, file)
  const target = await newTestLocation()
  t.after(() => target.remove())

  const copied = await runCli(['copy', '--from', file, '--to', target.location])
  assert.equal(copied.status, 0, copied.stderr.join('\n'))
  assert.match(copied.stdout[0]!, /^table\s+sqlite\s+postgres$/)
  const counts = countsOf(copied)
  assert.deepEqual([...counts.keys()], [...COPIED_TABLES])
  for (const [table, [sqlite, postgres]] of counts) {
    assert.equal(postgres, sqlite, table)
    assert.ok(sqlite > 0, `${table} has rows to copy`)
  }
  assert.match(copied.stdout.at(-1) ?? '', /^copied \d+ rows in [\d.]+ s; every table has as many rows in PostgreSQL as in SQLite$/)

  const serve = await startServe(t, { ...ENV, REPLENISH_DB: target.location })
  for (const [path, text] of made.answers) {
    const as = path.startsWith(A) ? ADMIN : made.key
    assert.equal((await request(serve.url, 'GET', path, { key: as })).text, text, path)
  }
  // New rows take ids above the copied ones (the sequences moved), and the chain of events goes on.
  const created = await request(serve.url, 'POST', '/api/v1/subscriptions', {
    key: made.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: 1, quantity: 1 }] } },
  })
  assert.equal(created.status, 200, created.text)
  assert.ok(created.body.id > made.rich + 1, `subscription ${created.body.id}`)
  assert.equal(created.body.line_items[0].id, counts.get('line_items')![0] + 1)
  assert.equal((await request(serve.url, 'POST', `/api/v1/subscriptions/${made.rich}/skip`, { key: made.key })).status, 200)
  const eventsPath = `${A}/subscriptions/${made.rich}/events`
  const before = JSON.parse(made.answers.get(eventsPath)!).events
  const after = (await request(serve.url, 'GET', eventsPath, { key: ADMIN })).body.events
  assert.deepEqual(after.slice(1), before)
  assert.equal(after[0].type, 'subscription.skipped')
  assert.ok(after[0].id > Math.max(...before.map((e: any) => e.id)))

  // Into a database that has rows now: refused, and nothing of it changed.
  const again = await runCli(['copy', '--from', file, '--to', target.location])
  assert.equal(again.status, 2)
  assert.match(again.stderr.join('\n'), /the target database is not empty \(rows in users, .*\); copy only into an empty database/)
  assert.equal((await request(serve.url, 'GET', '/api/v1/subscriptions', { key: made.key })).body.subscriptions.length, 3)
})

test('copy refuses a file of another schema version, a file that is no database, and bad arguments', async (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'r.db')
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: file })).status, 0)
  const older = join(dir, 'older.db')
  copyFileSync(file, older)
  const db = new DatabaseSync(older)
  db.exec('PRAGMA user_version = 8')
  db.close()
  // A key of a user that is not there: SQLite let it in with its foreign keys off.
  const broken = join(dir, 'broken.db')
  copyFileSync(file, broken)
  const bad = new DatabaseSync(broken)
  bad.exec(`PRAGMA foreign_keys = OFF; INSERT INTO api_keys (id, user_id, key_hash, prefix, created_at, updated_at) VALUES (1, 42, 'h', 'p', 'x', 'x')`)
  bad.close()
  const target = await newTestLocation()
  t.after(() => target.remove())
  const notDb = join(dir, 'notes.txt')
  writeFileSync(notDb, 'not a database, only some text that is long enough to fill a header of SQLite\n'.repeat(20))

  const cases: [string[], RegExp][] = [
    [['copy', '--from', older, '--to', target.location], /has schema version 8, this replenish copies version \d+: run `replenish migrate --db .*older\.db` on it first/],
    [['copy', '--from', broken, '--to', target.location], /--from .*broken\.db: its rows break a foreign key \(Key \(user_id\)=\(42\) is not present in table "users"\.\); nothing was copied/],
    [['copy', '--from', notDb, '--to', target.location], /--from: .*notes\.txt is not a SQLite database/],
    [['copy', '--from', join(dir, 'missing.db'), '--to', target.location], /--from: there is no file .*missing\.db/],
    [['copy', '--to', target.location], /copy needs --from/],
    [['copy', '--from', file], /copy needs --to/],
    [['copy', '--from', file, '--to', join(dir, 'other.db')], /--to: expected postgres:\/\/user@host:port\/database/],
    [['copy', '--from', file, '--to', 'postgres://copier:s3cret-pass@/nowhere'], /--to: expected postgres:\/\//],
    [['migrate', '--from', file], /--from is only for `replenish copy`/],
  ]
  for (const [argv, message] of cases) {
    const run = await runCli(argv, { REPLENISH_LOG: 'off' })
    assert.equal(run.status, 2, `${argv.join(' ')}: ${run.stderr.join('\n')}`)
    assert.match(run.stderr.join('\n'), message)
    assert.ok(!run.stderr.join('\n').includes('s3cret-pass'), 'the password is never shown')
  }
  // The file of this version copies into the same target, which the refusals left empty.
  assert.equal((await runCli(['copy', '--from', file, '--to', target.location])).status, 0)
})
