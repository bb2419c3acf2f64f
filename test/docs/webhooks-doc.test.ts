/**
 * docs/webhooks.md kept honest (issue 17). Its verification code is read from the doc at test time
 * and run against real deliveries; its event examples are held to the fields the service really
 * writes; its retry table and metric names to the code's. A change to the product that makes the
 * doc wrong fails here, and says which part of the doc to update.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { EVENT_TYPES } from '../../src/domain/events.ts'
import { retryDelayMs, afterFailure } from '../../src/domain/webhook-schedule.ts'
import { newWebhookSecret } from '../../src/admin/webhooks.ts'
import { webhookMetricsText } from '../../src/processing/webhooks/metrics.ts'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { startDispatcher, startReceiver, type Receiver, type Received } from '../helpers/webhooks.ts'
import { allEvents, lifecycleEnv, writeEveryEventType } from './every-event-type.ts'

const DOC = readFileSync(fileURLToPath(new URL('../../docs/webhooks.md', import.meta.url)), 'utf8')
const TODAY = '2026-01-15'

/** The text of the doc's `## <title>` section, up to the next `## ` heading. */
function section(title: string): string {
  const start = DOC.indexOf(`\n## ${title}\n`)
  assert.ok(start >= 0, `docs/webhooks.md has no "## ${title}" section`)
  const rest = DOC.slice(start + title.length + 5)
  const end = rest.search(/^## /m)
  return end >= 0 ? rest.slice(0, end) : rest
}

type Verify = (rawBody: string | Buffer, header: unknown, secret: string, options?: { toleranceSeconds?: number; now?: number }) => boolean

/** The doc's ```js block that exports verifyReplenishSignature, written out as a module and imported. */
async function docVerifier(t: TestContext): Promise<Verify> {
  const blocks = [...DOC.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string)
  const modules = blocks.filter((b) => /^export function verifyReplenishSignature\(/m.test(b))
  assert.equal(modules.length, 1, 'docs/webhooks.md has one ```js block exporting verifyReplenishSignature')
  const source = modules[0] as string
  assert.deepEqual([...source.matchAll(/^import .* from '([^']+)'$/gm)].map((m) => m[1]), ['node:crypto'], 'the module imports node:crypto only')
  const dir = mkdtempSync(join(tmpdir(), 'replenish-doc-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'verify-replenish-signature.mjs')
  writeFileSync(file, source)
  const module = (await import(pathToFileURL(file).href)) as { verifyReplenishSignature: Verify }
  return module.verifyReplenishSignature
}

type VerifiedEvent = (rawBody: string | Buffer, headers: Record<string, unknown>, secret: string) => unknown

/**
 * The doc's ```js block that exports verifiedEvent (with the standardwebhooks library), written out
 * as a module where Node finds the project's node_modules, and imported.
 */
async function docStandardVerifier(t: TestContext): Promise<VerifiedEvent> {
  const blocks = [...DOC.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string)
  const modules = blocks.filter((b) => /^export function verifiedEvent\(/m.test(b))
  assert.equal(modules.length, 1, 'docs/webhooks.md has one ```js block exporting verifiedEvent')
  assert.deepEqual([...(modules[0] as string).matchAll(/^import .* from '([^']+)'$/gm)].map((m) => m[1]), ['standardwebhooks'], 'the module imports the library only')
  const dir = mkdtempSync(join(fileURLToPath(new URL('../../node_modules/', import.meta.url)), '.doc-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'verified-event.mjs')
  writeFileSync(file, modules[0] as string)
  return ((await import(pathToFileURL(file).href)) as { verifiedEvent: VerifiedEvent }).verifiedEvent
}

/** The scheme as the doc states it, computed here independently: t, then one v1 per secret. */
function signAsDocumented(rawBody: string, unixSeconds: number, secrets: string[]): string {
  const v1 = secrets.map((s) => `v1=${createHmac('sha256', s).update(`${unixSeconds}.${rawBody}`).digest('hex')}`)
  return [`t=${unixSeconds}`, ...v1].join(',')
}

async function admin(server: TestServer, method: string, path: string, json?: unknown): Promise<any> {
  const res = await server.request(method, `/admin/api/v1${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })
  assert.ok(res.status === 200 || res.status === 201, `${method} ${path} → ${res.status} ${res.text}`)
  return res.body
}

/** The first request the receiver got (or gets) carrying an event of `type`. */
async function deliveryOf(receiver: Receiver, type: string): Promise<Received> {
  for (let n = 1; n <= 20; n++) {
    const found = (await receiver.waitFor(n)).find((r) => JSON.parse(r.body).type === type)
    if (found) return found
  }
  throw new Error(`no delivery of ${type}`)
}

const signatureOf = (r: Received): string => r.headers['replenish-signature'] as string

test('the doc\'s verifyReplenishSignature accepts real deliveries, and after a rotation either secret; it rejects a tampered body, a wrong secret and a t 6 minutes off', async (t) => {
  const verify = await docVerifier(t)
  const server = await startTestServer(t)
  const receiver = await startReceiver(t)
  const endpoint = await admin(server, 'POST', '/webhook_endpoints', { webhook_endpoint: { url: receiver.url, events: ['*'] } })
  const secret: string = endpoint.secret
  const dispatcher = startDispatcher(server)
  const user = await seedUser(server.store)
  const sub = await createSubscription(server, user.key)

  const created = await deliveryOf(receiver, 'subscription.created')
  const header = signatureOf(created)
  assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/)
  assert.equal(verify(created.body, header, secret), true)
  assert.equal(verify(Buffer.from(created.body), header, secret), true, 'a Buffer of the raw body verifies too')
  const tampered = created.body.replace('"state":"active"', '"state":"canceled"')
  assert.notEqual(tampered, created.body)
  assert.equal(verify(tampered, header, secret), false, 'a tampered body')
  assert.equal(verify(created.body, header, newWebhookSecret()), false, 'another secret')
  assert.equal(verify(created.body, undefined, secret), false, 'no header')
  assert.throws(() => verify(JSON.parse(created.body), header, secret), TypeError, 'parsed JSON instead of the raw body')

  // The 5-minute tolerance, on bodies re-signed here by the documented scheme (which the real
  // header matches, so the scheme is the product's).
  const now = Math.floor(Date.now() / 1000)
  const t0 = Number(/^t=(\d+)/.exec(header)?.[1])
  assert.equal(signAsDocumented(created.body, t0, [secret]), header)
  assert.equal(verify(created.body, signAsDocumented(created.body, now - 240, [secret]), secret), true, '4 minutes old')
  assert.equal(verify(created.body, signAsDocumented(created.body, now - 360, [secret]), secret), false, '6 minutes old')
  assert.equal(verify(created.body, signAsDocumented(created.body, now + 360, [secret]), secret), false, '6 minutes ahead')

  // Rotation: the dispatcher is restarted around it, so that it signs with the secrets as they
  // are after the rotation (a running one learns them within a second).
  await dispatcher.stop(100)
  const rotated: string = (await admin(server, 'POST', `/webhook_endpoints/${endpoint.id}/rotate_secret`)).secret
  startDispatcher(server)
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })).status, 200)
  const skipped = await deliveryOf(receiver, 'subscription.skipped')
  const both = signatureOf(skipped)
  assert.match(both, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
  assert.equal(both, signAsDocumented(skipped.body, Number(/^t=(\d+)/.exec(both)?.[1]), [rotated, secret]), 'two v1 entries, the new secret\'s first')
  assert.equal(verify(skipped.body, both, rotated), true, 'the new secret')
  assert.equal(verify(skipped.body, both, secret), true, 'the old secret')
  assert.equal(verify(skipped.body, both, newWebhookSecret()), false, 'a third secret')
  assert.equal(verify(created.body, header, rotated), false, 'the new secret did not sign before the rotation')
})

test('the doc\'s verifiedEvent (standardwebhooks) returns the event of a real delivery, and null for a tampered one or another secret; the older secret format converts as the doc shows', async (t) => {
  const verifiedEvent = await docStandardVerifier(t)
  const server = await startTestServer(t)
  const receiver = await startReceiver(t)
  const endpoint = await admin(server, 'POST', '/webhook_endpoints', { webhook_endpoint: { url: receiver.url, events: ['*'] } })
  startDispatcher(server)
  const user = await seedUser(server.store)
  await createSubscription(server, user.key)
  const created = await deliveryOf(receiver, 'subscription.created')
  assert.deepEqual(verifiedEvent(created.body, created.headers, endpoint.secret), JSON.parse(created.body))
  assert.deepEqual(verifiedEvent(Buffer.from(created.body), created.headers, endpoint.secret), JSON.parse(created.body))
  assert.equal(verifiedEvent(created.body.replace('"state":"active"', '"state":"canceled"'), created.headers, endpoint.secret), null)
  assert.equal(verifiedEvent(created.body, created.headers, newWebhookSecret()), null)

  // The conversion the doc gives for a secret of the older base64url format.
  const line = /^const standardSecret = (.*)$/m.exec(section('Standard Webhooks'))?.[1]
  assert.ok(line, 'the doc shows the conversion of an older secret')
  const convert = new Function('oldSecret', `return ${line}`) as (old: string) => string
  const bytes = Buffer.from('fb'.repeat(32), 'hex')
  assert.equal(convert(`whsec_${bytes.toString('base64url')}`), `whsec_${bytes.toString('base64')}`)
})

/** The catalogue's examples: the ```json block under each `#### <type>` heading. */
function catalogueExamples(): Map<string, any> {
  const examples = new Map<string, any>()
  for (const chunk of section('The event catalogue').split(/^#### /m).slice(1)) {
    const type = chunk.slice(0, chunk.indexOf('\n')).trim()
    const json = /^```json\n([\s\S]*?)^```$/m.exec(chunk)
    assert.ok(json, `the catalogue's ${type} has a json example`)
    assert.equal(examples.has(type), false, `${type} is listed once`)
    examples.set(type, JSON.parse(json[1] as string))
  }
  return examples
}

/**
 * Where `doc` and `real` differ in shape: the keys (in order) of every object both hold at the
 * same place, arrays compared by their first elements. Values may differ; a null on either side
 * (an address not given) is not compared further.
 */
function shapeDiff(doc: unknown, real: unknown, at: string): string[] {
  if (Array.isArray(doc) && Array.isArray(real)) {
    return doc.length > 0 && real.length > 0 ? shapeDiff(doc[0], real[0], `${at}[0]`) : []
  }
  if (doc === null || real === null || typeof doc !== 'object' || typeof real !== 'object') return []
  const docKeys = Object.keys(doc)
  const realKeys = Object.keys(real)
  if (docKeys.join() !== realKeys.join()) return [`${at}: the doc has ${docKeys.join(', ')}; the service writes ${realKeys.join(', ')}`]
  return docKeys.flatMap((k) => shapeDiff((doc as Record<string, unknown>)[k], (real as Record<string, unknown>)[k], `${at}.${k}`))
}

test('the catalogue has one example per event type, each with the fields of a real event of that type', async (t) => {
  const examples = catalogueExamples()
  assert.deepEqual([...examples.keys()].sort(), [...EVENT_TYPES].sort(), 'the catalogue lists exactly EVENT_TYPES')

  const server = await startTestServer(t, lifecycleEnv(TODAY))
  await writeEveryEventType(server, TODAY)
  const real = await allEvents(server)
  for (const type of EVENT_TYPES) {
    const example = examples.get(type)
    const live = real.find((e) => e.type === type)
    assert.ok(live, `the lifecycle wrote a ${type} event`)
    assert.equal(example.type, type, `the example under ${type} is one`)
    assert.deepEqual(Object.keys(example), Object.keys(live), `${type}: the event's keys`)
    // C18: the example names who makes such an event in that lifecycle (a customer, the shop, the processor).
    assert.equal(example.actor?.type, live.actor?.type, `${type}: the example's actor`)
    assert.deepEqual(Object.keys(example.data), ['object'])
    assert.deepEqual(shapeDiff(example.data.object, live.data.object, `${type} data.object`), [], 'regenerate the examples: npx tsx docs/tools/event-examples.ts')
    if (type.startsWith('installment.')) assert.deepEqual(Object.keys(example.data.object.user), ['id', 'email', 'external_id'])
  }
})

/** "10 s", "4.8 min", "3.6 h" → seconds. */
function seconds(text: string): number {
  const m = /^([\d.]+) (s|min|h)$/.exec(text.trim())
  assert.ok(m, `"${text}" is a duration`)
  return Number(m[1]) * { s: 1, min: 60, h: 3600 }[m[2] as 's' | 'min' | 'h']
}

test('the retry table is the schedule of the default base: nominal delays, the ±20 % range, and as many retries as the 3-day window allows', () => {
  const rows = [...section('Delivery: success, retries, duplicates and order').matchAll(/^\| (\d+) \| ([^|]+) \| ([^|]+) – ([^|]+) \|/gm)]
  const close = (doc: number, ms: number, what: string): void => assert.ok(Math.abs(doc - ms / 1000) <= 0.005 * (ms / 1000), `${what}: the doc says ${doc} s, the schedule ${ms / 1000} s`)
  rows.forEach((row, i) => {
    const retry = i + 1
    assert.equal(Number(row[1]), retry)
    close(seconds(row[2] as string), retryDelayMs(retry, 10, 0.5), `retry ${retry}, nominal`)
    close(seconds(row[3] as string), retryDelayMs(retry, 10, 0), `retry ${retry}, shortest`)
    close(seconds(row[4] as string), retryDelayMs(retry, 10, 1 - 1e-12), `retry ${retry}, longest`)
  })
  // The most retries a delivery can get: every delay drawn at its shortest.
  let nowMs = 0
  let retries = 0
  for (;;) {
    const next = afterFailure({ createdMs: 0, failures: retries + 1, nowMs, baseSeconds: 10, random: 0 })
    if (next.state === 'failed') break
    nowMs = next.dueMs
    retries++
  }
  assert.equal(rows.length, retries, 'the table has a row for every retry there can be')
})

test('the metrics the doc shows are the ones /metrics prints for webhooks', async (t) => {
  const documented = new Set([...section('Operations').matchAll(/^(replenish_webhook_\w+)\{/gm)].map((m) => m[1]))
  const server = await startTestServer(t)
  await admin(server, 'POST', '/webhook_endpoints', { webhook_endpoint: { url: 'http://127.0.0.1:9/hooks', events: ['*'] } })
  const printed = new Set([...(await webhookMetricsText(server.store, Date.now())).matchAll(/^(replenish_webhook_\w+)\{/gm)].map((m) => m[1]))
  assert.ok(printed.size > 0)
  assert.deepEqual([...documented].sort(), [...printed].sort())
})
