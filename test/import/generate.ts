import { costOf, lineMoney, totalsOf } from '../../src/domain/money.ts'

/**
 * A generated import file (docs/import.md) of `n` subscriptions with everything they refer to,
 * and what the customer API must answer for each: ids with gaps, every state, paused ones with
 * and without a date, past dates, counters, both addresses, payment or none, one or two line
 * items (some of an item that can no longer be subscribed to), several currencies.
 */

export interface GeneratedImport {
  /** The file, one line per row. */
  readonly lines: readonly string[]
  /** Each user's API key, by user id. */
  readonly keys: ReadonlyMap<number, string>
  /** C3's body of every subscription, as GET /api/v1/subscriptions/:id must answer it. */
  readonly subscriptions: readonly Record<string, any>[]
  /** The highest id of each kind in the file. */
  readonly max: { readonly user: number; readonly payment_method: number; readonly payment_source: number; readonly subscribable: number; readonly subscription: number; readonly line_item: number }
  readonly counts: Readonly<Record<string, number>>
}

const STATES = ['active', 'active', 'pending_cancellation', 'canceled', 'inactive'] as const
const UNITS = ['day', 'week', 'month', 'year'] as const
const CURRENCIES = ['USD', 'CAD', 'EUR'] as const
const PROCESSING = ['pending', 'success', 'failed'] as const
const pad = (n: number): string => String(n).padStart(2, '0')
const time = (year: number, i: number): string => `${year}-${pad((i % 12) + 1)}-${pad((i % 28) + 1)}T${pad(i % 24)}:${pad(i % 60)}:${pad((i * 7) % 60)}.${String(i % 1000).padStart(3, '0')}Z`

/** The catalog's prices (C16), by subscribable id, and its discounts in basis points. */
const PRICES: Record<number, Record<string, string>> = { 11: { CAD: '31.50', EUR: '22.00', USD: '24.00' }, 12: { CAD: '11.25', USD: '8.50' }, 13: {} }
const DISCOUNTS: Record<number, number> = { 11: 1000, 12: 0, 13: 500 }

/** The body as C16 shows it: each line's price, discount and total, and the subscription's totals. */
function priced(body: Record<string, any>, currency: string): Record<string, any> {
  const unit = (id: number): bigint | null => (PRICES[id]?.[currency] === undefined ? null : BigInt((PRICES[id] as Record<string, string>)[currency]!.replace('.', '')))
  const lines = (body['line_items'] as { subscribable_id: number; quantity: number }[])
  const totals = totalsOf(lines.map((li) => costOf(li.quantity, unit(li.subscribable_id), DISCOUNTS[li.subscribable_id] ?? 0)), currency)
  return {
    ...body,
    ...totals,
    line_items: lines.map((li) => ({ ...li, ...lineMoney(li.quantity, unit(li.subscribable_id), DISCOUNTS[li.subscribable_id] ?? 0, currency) })),
  }
}

export function generateImport(n: number): GeneratedImport {
  const users = Math.max(1, Math.ceil(n / 5))
  const userId = (u: number): number => 100 + 2 * u
  const lines: string[] = []
  const keys = new Map<number, string>()
  const line = (o: object): void => void lines.push(JSON.stringify(o))
  for (let u = 0; u < users; u++) {
    line({ type: 'user', id: userId(u), email: `customer${u}@example.com`, external_id: String(u), created_at: time(2020, u), updated_at: time(2021, u) })
  }
  for (let u = 0; u < users; u++) {
    const key = `legacy_${String(userId(u)).padStart(12, '0')}_${'k'.repeat(8)}`
    keys.set(userId(u), key)
    line({ type: 'api_key', user_id: userId(u), key })
  }
  line({ type: 'payment_method', id: 3, name: 'Credit Card', active: true, created_at: time(2019, 1), updated_at: time(2019, 2) })
  line({ type: 'payment_method', id: 8, name: 'Retired gateway', active: false })
  for (let u = 0; u < users; u++) {
    line({ type: 'payment_source', id: 500 + u, user_id: userId(u), payment_method_id: 3, kind: 'credit_card', brand: 'visa', last_digits: String(1000 + (u % 9000)), month: (u % 12) + 1, year: 2030, gateway_reference: `cus_${u}/pm_${u}`, created_at: time(2022, u), updated_at: time(2022, u + 1) })
  }
  // C16: prices per currency and a discount; tea has no EUR price, the retired blend none at all.
  line({ type: 'subscribable', id: 11, sku: 'COFFEE-1KG', name: 'Coffee beans, 1 kg', prices: PRICES[11], discount_percent: '10' })
  line({ type: 'subscribable', id: 12, sku: 'TEA-250G', name: 'Green tea, 250 g', prices: PRICES[12], created_at: time(2019, 3) })
  line({ type: 'subscribable', id: 13, sku: 'OLD-BLEND', name: 'Retired blend', subscribable: false, discount_percent: '5' })

  const subscriptions: Record<string, any>[] = []
  let lineItems = 0
  let maxLineItem = 0
  for (let i = 0; i < n; i++) {
    const id = 1000 + 3 * i
    const user = userId(i % users)
    const state = STATES[i % 5] as string
    const pausedForever = i % 7 === 0 && state === 'active'
    const paused = pausedForever || i % 5 === 1
    const ended = state === 'canceled' || state === 'inactive'
    const actionable = ended || pausedForever ? null : `2026-${pad((i % 12) + 1)}-${pad((i % 31 % 28) + 1)}`
    const units = UNITS[i % 4] as string
    const address = (kind: string) => ({
      firstname: `First${i}`, lastname: i % 2 === 0 ? `Last "${i}" ✓` : null, company: null, address1: `${i} ${kind} St`, address2: i % 3 === 1 ? 'Apt 2' : null,
      city: 'Springfield', zipcode: String(10000 + i), state_name: i % 2 === 0 ? 'IL' : null, country_iso: 'US', phone: null,
    })
    const created_at = time(2023, i)
    const updated_at = time(2025, i)
    const items = (i % 2 === 0 ? [11] : [12, 13]).map((subscribable, k) => ({
      id: 5000 + 2 * i + k, subscription_id: id, subscribable_id: subscribable, quantity: (i % 5) + 1 + k,
      created_at: k === 0 ? time(2023, i + 1) : created_at, updated_at: k === 0 ? time(2024, i) : updated_at,
    }))
    lineItems += items.length
    maxLineItem = Math.max(maxLineItem, ...items.map((li) => li.id))
    const currency = CURRENCIES[i % 3] as string
    const body = {
      id, user_id: user, state, paused, interval_length: (i % 3) + 1, interval_units: units,
      actionable_date: actionable, end_date: i % 6 === 0 ? `2027-${pad((i % 12) + 1)}-15` : null,
      skip_count: i % 4, successive_skip_count: i % 2,
      payment_method_id: i % 2 === 0 ? 3 : null, payment_source_id: i % 2 === 0 ? 500 + (i % users) : null,
      currency, processing_state: PROCESSING[i % 3],
      shipping_address: i % 3 === 0 ? null : address('Ship'), billing_address: i % 4 === 0 ? address('Bill') : null,
      line_items: items, created_at, updated_at,
    }
    subscriptions.push(priced(body, currency))
    // The second item leaves its times out: they are the subscription's.
    const fileItems = items.map(({ subscription_id: _, ...li }, k) => (k === 0 ? li : { id: li.id, subscribable_id: li.subscribable_id, quantity: li.quantity }))
    line({ type: 'subscription', ...body, line_items: fileItems })
  }
  return {
    lines, keys, subscriptions,
    max: { user: userId(users - 1), payment_method: 8, payment_source: 500 + users - 1, subscribable: 13, subscription: 1000 + 3 * (n - 1), line_item: maxLineItem },
    counts: { users, api_keys: users, payment_methods: 2, payment_sources: users, subscribables: 3, subscriptions: n, line_items: lineItems },
  }
}

/** The summary an import of a new file answers: everything inserted. */
export function allInserted(g: GeneratedImport): Record<string, unknown> {
  const lines = Object.entries(g.counts).reduce((sum, [kind, n]) => sum + (kind === 'line_items' ? 0 : n), 0)
  return { lines, ...Object.fromEntries(Object.entries(g.counts).map(([kind, n]) => [kind, { inserted: n, present: 0 }])) }
}
