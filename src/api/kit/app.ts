import type { Config } from '../../config.ts'
import type { Clock } from '../../clock.ts'
import type { Store } from '../../store/api.ts'
import type { Actor } from '../../domain/types.ts'

/** What every handler may use: built once by the composition root (cli/serve.ts). */
export interface App {
  readonly config: Config
  readonly store: Store
  readonly clock: Clock
  /**
   * presented key → user id (and the key's hash and C18 actor), so an authorized read costs no key
   * query; cleared on revoke. On PostgreSQL an entry carries the credentials' generation it was
   * read at and holds only for a read that checks it (auth.ts, authenticatedRead).
   */
  readonly keyCache: Map<string, { userId: number; until: number; hash: string; actor: Actor; generation?: number }>
  /**
   * How long a key stays in `keyCache` (10 s). On SQLite one process revokes, and clears it; on
   * PostgreSQL a key revoked through another instance must fail here at once (C15), which the
   * generation check does.
   */
  readonly keyCacheMs: number
  /** Per-key token buckets and per-address failure counters (C12 limits). */
  readonly limits: RequestLimits
  /** stderr's error log (serve's, or a test's): work a request started but does not wait for reports here. */
  readonly logError: (entry: object) => void
  /**
   * Called after a webhook endpoint is registered, changed, deleted or given a new secret:
   * serve's dispatcher reads its endpoints again at once (and once a second in any case). The
   * change is answered once every listener's promise has settled, so a delivery of a later event
   * already goes where the change says (C18: a new url takes effect at once).
   */
  readonly endpointsChanged: Set<() => unknown>
}

export interface RequestLimits {
  /** Throws 429 when the caller has no token left. */
  take(scope: string): void
  /** Throws 429 when this address sent too many bad keys recently. */
  checkAddress(address: string): void
  recordFailure(address: string): void
}

export const noLimits: RequestLimits = { take() {}, checkAddress() {}, recordFailure() {} }
