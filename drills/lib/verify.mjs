import { DatabaseSync } from 'node:sqlite'

/**
 * What the checks found lost so far. A write is counted once however many checks see it missing:
 * a lost PATCH by its value (a later, higher value would hide it from the next check), a lost
 * skip as the largest shortfall seen on its subscription; a row holding what was never sent, once.
 */
export function makeLosses() {
  return { patches: new Set(), skips: new Map(), patchEvents: 0, phantom: new Set() }
}

export function lostCount(losses) {
  let skips = 0
  for (const n of losses.skips.values()) skips += n
  return Math.max(losses.patches.size, losses.patchEvents) + skips
}

/**
 * Checks the database file against the ledger (load.mjs) through a connection of its own (WAL
 * lets it read beside a running server), adding what is missing to `losses`:
 * - `PRAGMA integrity_check` answers ok;
 * - a line item's quantity is at least every acknowledged value and at most the last value sent
 *   (values only increase, so an acknowledged value above the stored one is a lost write);
 * - a subscription's skip_count is at least its acknowledged skips and at most the skips sent;
 * - with `events`, each acknowledged write also left its event (line_item.updated,
 *   subscription.skipped): a full scan of the events table, so only at the end.
 * Returns { integrity, details }.
 */
export function verify(file, ledger, losses, { events = false } = {}) {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    const integrity = db.prepare('PRAGMA integrity_check').all().map((r) => r.integrity_check).join('; ')
    const quantity = new Map(db.prepare('SELECT id, quantity FROM line_items').all().map((r) => [r.id, r.quantity]))
    const skipCount = new Map(db.prepare('SELECT id, skip_count FROM subscriptions').all().map((r) => [r.id, r.skip_count]))
    const eventCounts = events ? countEvents(db) : undefined
    const details = []
    const note = (line) => details.length < 10 && details.push(line)
    const shortfall = (id, n) => losses.skips.set(id, Math.max(losses.skips.get(id) ?? 0, n))
    let ackedPatches = 0
    for (const client of ledger) {
      for (const item of client.items) {
        ackedPatches += item.acked.length
        const stored = quantity.get(item.id) ?? 0
        const missing = item.acked.filter((q) => q > stored)
        for (const q of missing) losses.patches.add(`${item.id}:${q}`)
        if (missing.length > 0) note(`line item ${item.id}: quantity ${stored}, but ${item.acked.at(-1)} was acknowledged`)
        if (stored > item.sent) (losses.phantom.add(`line item ${item.id}`), note(`line item ${item.id}: quantity ${stored} was never sent (last sent ${item.sent})`))
      }
      for (const sub of client.subs) {
        const stored = skipCount.get(sub.id) ?? 0
        if (stored < sub.acked) (shortfall(sub.id, sub.acked - stored), note(`subscription ${sub.id}: skip_count ${stored} for ${sub.acked} acknowledged skips`))
        if (stored > sub.sent) (losses.phantom.add(`subscription ${sub.id}`), note(`subscription ${sub.id}: skip_count ${stored} for ${sub.sent} skips sent`))
        const skipped = eventCounts?.skipped.get(sub.id) ?? 0
        if (eventCounts && skipped < sub.acked) (shortfall(sub.id, sub.acked - skipped), note(`subscription ${sub.id}: ${skipped} subscription.skipped events for ${sub.acked} acknowledged skips`))
      }
    }
    if (eventCounts && eventCounts.updated < ackedPatches) {
      losses.patchEvents = Math.max(losses.patchEvents, ackedPatches - eventCounts.updated)
      note(`${eventCounts.updated} line_item.updated events for ${ackedPatches} acknowledged PATCHes`)
    }
    return { integrity, details }
  } finally {
    db.close()
  }
}

function countEvents(db) {
  const skipped = new Map(db.prepare("SELECT subscription_id AS id, count(*) AS n FROM events WHERE type = 'subscription.skipped' GROUP BY subscription_id").all().map((r) => [r.id, r.n]))
  const updated = db.prepare("SELECT count(*) AS n FROM events WHERE type = 'line_item.updated'").get().n
  return { skipped, updated }
}
