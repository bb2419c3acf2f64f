import { mailKindOf } from '../../domain/mail/kinds.ts'
import type { EventsTx, RecordedEvent, Store, Tx, Unit, UnitContext } from '../../store/api.ts'

/**
 * The mail outbox's writer (C17): the store as the service uses it when e-mail is configured, whose
 * every unit also queues a mail for each event that tells a customer something, in the same unit
 * (so in the same transaction as the event: at least once, and never for a change that rolled
 * back). Every event of the service goes through a unit's `tx.events`, whatever writes it (a
 * request, the processor, an erasure), so this one place sees them all; the store stays free of
 * the policy. Without e-mail configured the store is used as it is and no mail is queued.
 *
 * The store below does the rest: a mail goes to the subscription's owner, unless they have no
 * address (erased) or have turned e-mail off (`EmailsTx.enqueue`).
 */
export function withMailOutbox(store: Store): Store {
  // SQLite hands every unit the same `tx`: its wrapper is made once.
  const wrapped = new WeakMap<Tx, Tx>()
  const wrap = (tx: Tx): Tx => {
    let out = wrapped.get(tx)
    if (!out) wrapped.set(tx, (out = Object.create(tx, { events: { value: eventsWithMail(tx), enumerable: true } }) as Tx))
    return out
  }
  const write = <T>(unit: Unit<T>, context?: UnitContext): Promise<T> => store.write((tx) => unit(wrap(tx)), context)
  return Object.create(store, { write: { value: write, enumerable: true, writable: true } }) as Store
}

function eventsWithMail(tx: Tx): EventsTx {
  const events = tx.events
  const queue = async (type: string, subscriptionId: number | null, eventId: number, object: () => unknown): Promise<void> => {
    if (subscriptionId === null) return
    const kind = mailKindOf(type, object)
    if (kind !== undefined) await tx.emails.enqueue(kind, subscriptionId, eventId, Date.now())
  }
  const recordJson = async (type: string, subscriptionId: number | null, objectJson: string): Promise<number> => {
    const id = await events.recordJson(type, subscriptionId, objectJson)
    await queue(type, subscriptionId, id, () => JSON.parse(objectJson))
    return id
  }
  return Object.create(events, {
    record: {
      enumerable: true,
      value: async (type: string, subscriptionId: number | null, object: object): Promise<number> => {
        const id = await events.record(type, subscriptionId, object)
        await queue(type, subscriptionId, id, () => object)
        return id
      },
    },
    recordJson: { enumerable: true, value: recordJson },
    append: {
      enumerable: true,
      // Only an event that makes a mail needs its id: the rest keep the store's cheaper append.
      value: async (type: string, subscriptionId: number | null, objectJson: string): Promise<void> => {
        if (subscriptionId === null || mailKindOf(type, () => JSON.parse(objectJson)) === undefined) return events.append(type, subscriptionId, objectJson)
        await recordJson(type, subscriptionId, objectJson)
      },
    },
    recordSubscriptions: {
      enumerable: true,
      value: async (type: `subscription.${string}`, subscriptionIds: readonly number[]): Promise<RecordedEvent[]> => {
        const recorded = await events.recordSubscriptions(type, subscriptionIds)
        // A subscription event's kind of mail follows from its type: its object is never asked for.
        const noObject = (): never => { throw new Error(`${type}: a subscription event's mail needs no object`) }
        for (const r of recorded) await queue(type, r.subscriptionId, r.eventId, noObject)
        return recorded
      },
    },
  }) as EventsTx
}
