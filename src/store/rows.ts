import type { Address, LineItem, Subscription } from '../domain/types.ts'

/** node:sqlite rows are null-prototype objects of SQL values; these turn them into domain types. */
export type Row = Record<string, string | number | bigint | null | Uint8Array>

export function toSubscription(r: Row): Subscription {
  return {
    id: r['id'] as number,
    user_id: r['user_id'] as number,
    state: r['state'] as Subscription['state'],
    paused: r['paused'] === 1,
    interval_length: r['interval_length'] as number,
    interval_units: r['interval_units'] as Subscription['interval_units'],
    actionable_date: r['actionable_date'] as string | null,
    anchor_day: r['anchor_day'] as number | null,
    end_date: r['end_date'] as string | null,
    skip_count: r['skip_count'] as number,
    successive_skip_count: r['successive_skip_count'] as number,
    payment_method_id: r['payment_method_id'] as number | null,
    payment_source_id: r['payment_source_id'] as number | null,
    currency: r['currency'] as string,
    processing_state: r['processing_state'] as Subscription['processing_state'],
    shipping_address: r['shipping_address'] === null ? null : (JSON.parse(r['shipping_address'] as string) as Address),
    billing_address: r['billing_address'] === null ? null : (JSON.parse(r['billing_address'] as string) as Address),
    created_on: r['created_on'] as string,
    created_at: r['created_at'] as string,
    updated_at: r['updated_at'] as string,
  }
}

export function toLineItem(r: Row): LineItem {
  return {
    id: r['id'] as number,
    subscription_id: r['subscription_id'] as number,
    subscribable_id: r['subscribable_id'] as number,
    quantity: r['quantity'] as number,
    created_at: r['created_at'] as string,
    updated_at: r['updated_at'] as string,
  }
}

/** A plain object copy (rows have no prototype, which surprises deepEqual and spread users). */
export function plain<T>(r: Row): T {
  return { ...r } as T
}

export const nowIso = (): string => new Date().toISOString()
