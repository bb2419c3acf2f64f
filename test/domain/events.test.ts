import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { EVENT_TYPES, isEventType } from '../../src/domain/events.ts'

// The catalogue webhook endpoints are validated against (C10) must be what the service records:
// a type recorded but missing here could not be subscribed to; one listed but never recorded would
// be a promise no delivery keeps.

const SRC = join(import.meta.dirname, '../../src')
const CATALOGUE = join(SRC, 'domain/events.ts')
const TYPE_LITERAL = /['"`]((?:subscription|line_item|installment|webhook)\.[a-z_]+)['"`]/g

function typesNamedInSource(): Set<string> {
  const found = new Set<string>()
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    const file = join(entry.parentPath, entry.name)
    if (!entry.isFile() || !file.endsWith('.ts') || file === CATALOGUE) continue
    for (const m of readFileSync(file, 'utf8').matchAll(TYPE_LITERAL)) found.add(m[1] as string)
  }
  return found
}

test('EVENT_TYPES is exactly the set of event types the source records (C10: 22 types, C17: subscription.upcoming, C18: webhook.test)', () => {
  assert.equal(EVENT_TYPES.length, 24)
  assert.equal(new Set(EVENT_TYPES).size, EVENT_TYPES.length)
  assert.deepEqual([...typesNamedInSource()].sort(), [...EVENT_TYPES].sort())
})

test('isEventType knows the catalogue and nothing else; `*` is not a type', () => {
  for (const type of EVENT_TYPES) assert.equal(isEventType(type), true, type)
  for (const other of ['*', 'subscription', 'subscription.cancelled', 'SUBSCRIPTION.CREATED', 7, null, undefined]) assert.equal(isEventType(other), false, String(other))
})
