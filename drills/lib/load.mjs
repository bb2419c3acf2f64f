/**
 * The write load of the kill -9 drill, and the ledger of what it was told. Each client owns its
 * own users (so no two clients write the same row) and, one request at a time, either sets a line
 * item's quantity to the next value of that item's increasing sequence (PATCH) or skips one of its
 * subscriptions (POST skip). A write counts as acknowledged only once its 200 and whole body have
 * arrived; a write whose answer was cut off by the kill may or may not be stored, so it only widens
 * what the database may hold, never what it must.
 */

/** The quantity a line item may not exceed (C4: 1…9999). */
const MAX_QUANTITY = 9999

/** Splits the seeded users between `clients` clients; every seeded row starts at quantity 1 and skip_count 0. */
export function makeLedger(users, clients) {
  const owned = Array.from({ length: clients }, () => ({ items: [], subs: [], next: 0 }))
  users.forEach((u, i) => {
    const c = owned[i % clients]
    for (const id of u.lineItems) c.items.push({ id, key: u.key, sent: 1, acked: [] })
    for (const id of u.subscriptions) c.subs.push({ id, key: u.key, sent: 0, acked: 0 })
  })
  return owned
}

/**
 * Runs one client against `url` until a request fails: after the kill that is the end of the
 * round; before it, a failure recorded in `round.unexpected` (as is any answer other than 200).
 * Counts into `round.counts`.
 */
export async function runClient(client, url, round) {
  for (;;) {
    const patch = Math.random() < 0.5
    const target = patch ? client.items[client.next++ % client.items.length] : client.subs[Math.floor(Math.random() * client.subs.length)]
    let request
    if (patch) {
      if (target.sent >= MAX_QUANTITY) throw new Error(`line item ${target.id} reached quantity ${MAX_QUANTITY}: seed more users or run fewer rounds`)
      const quantity = ++target.sent
      request = { method: 'PATCH', path: `/api/v1/line_items/${target.id}`, body: JSON.stringify({ subscription_line_item: { quantity } }), done: () => target.acked.push(quantity) }
    } else {
      target.sent++
      request = { method: 'POST', path: `/api/v1/subscriptions/${target.id}/skip`, body: undefined, done: () => target.acked++ }
    }
    let status
    try {
      const res = await fetch(`${url}${request.path}`, {
        method: request.method,
        headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
        body: request.body,
      })
      await res.arrayBuffer()
      status = res.status
    } catch (err) {
      round.counts.unanswered++
      if (!round.killed) round.unexpected.push(`${request.method} ${request.path}: ${err.cause?.code ?? err.message} before the kill`)
      return
    }
    if (status !== 200) {
      round.unexpected.push(`${request.method} ${request.path}: ${status}`)
      continue
    }
    request.done()
    round.counts[patch ? 'patch' : 'skip']++
  }
}
