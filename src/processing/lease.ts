import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Store, Tx } from '../store/api.ts'

/**
 * The processing lease (C9): one processor at a time per database file, whichever process it
 * runs in. The holder renews it inside every batch's unit of writes, so a holder that lost it
 * (it stalled past the expiry and another took over) rolls its batch back instead of
 * committing work twice.
 */
export const PROCESSING_LEASE = 'processor'
export const LEASE_TTL_MS = 60_000
const POLL_MS = 200

export class LeaseLost extends Error {
  override readonly name = 'LeaseLost'
}

/** `host:pid:random`: unique per run, and it names the process so a dead one can be recognised. */
export function newHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
}

/**
 * True when the holder was a process on this host that no longer exists (killed with -9, say):
 * its lease need not be waited out. Holders elsewhere are trusted until their lease expires.
 */
export function holderIsGone(holder: string): boolean {
  const [host, pidText] = holder.split(':')
  const pid = Number(pidText)
  if (host !== hostname() || !Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

export interface AcquireOptions {
  /** Wait for the current holder to finish (the CLI) instead of giving up at once (a schedule tick). */
  readonly wait: boolean
  readonly signal?: AbortSignal | undefined
  readonly onWait?: ((holder: string) => void) | undefined
}

/** Takes the lease; false when it is held elsewhere and we do not (or no longer) wait. */
export async function acquireLease(store: Store, holder: string, options: AcquireOptions): Promise<boolean> {
  let told = false
  for (;;) {
    const other = await store.write((tx) => {
      const now = Date.now()
      return tx.leases.acquire(PROCESSING_LEASE, holder, now + LEASE_TTL_MS, now, holderIsGone)
    })
    if (other === undefined) return true
    if (!options.wait || options.signal?.aborted) return false
    if (!told) options.onWait?.(other.holder)
    told = true
    await sleep(POLL_MS)
  }
}

/** Inside a batch's unit: keep the lease, or abort the unit when it was lost. */
export async function renewLease(tx: Tx, holder: string): Promise<void> {
  if (!(await tx.leases.renew(PROCESSING_LEASE, holder, Date.now() + LEASE_TTL_MS))) {
    throw new LeaseLost('the processing lease was taken over by another processor')
  }
}

export async function releaseLease(store: Store, holder: string): Promise<void> {
  await store.write((tx) => tx.leases.release(PROCESSING_LEASE, holder))
}
