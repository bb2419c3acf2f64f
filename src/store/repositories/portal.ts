/** Portal links and sessions (C14): the repository's records and interfaces, exported by ../api.ts. */

/** A portal link just used (C14): whose portal it opens, and where "back to the shop" leads. */
export interface PortalLinkUse {
  readonly user_id: number
  readonly return_url: string | null
}

/** A live portal session (C14): found by the hash of its cookie's id. */
export interface PortalSession {
  readonly id: number
  readonly user_id: number
  readonly csrf_token: string
  readonly return_url: string | null
  /** Idle expiry, ISO 8601: moved on by `touchSession`. */
  readonly expires_at: string
  readonly touched_at: string
}

export interface PortalReads {
  /** The session, unless it expired before `now` or its user was erased. */
  sessionByHash(sessionHash: string, now: string): Promise<PortalSession | undefined>
  /**
   * Where a link leads back to, used or expired alike (C18: the 410 page links there): its
   * `return_url`, or null when it has none, is unknown (pruned a day after expiry) or its user was erased.
   */
  returnUrlOfLink(tokenHash: string): Promise<string | null>
}

export interface PortalTx extends PortalReads {
  createLink(tokenHash: string, userId: number, returnUrl: string | null, expiresAt: string, now: string): Promise<void>
  /** Marks the link used and answers its user, or undefined when it is unknown, used, expired or its user erased. */
  useLink(tokenHash: string, now: string): Promise<PortalLinkUse | undefined>
  createSession(sessionHash: string, userId: number, csrfToken: string, returnUrl: string | null, expiresAt: string, now: string): Promise<void>
  touchSession(id: number, expiresAt: string, now: string): Promise<void>
  deleteSession(sessionHash: string): Promise<void>
  /** Ends every session and unused link of the user (erasure). */
  endAllOf(userId: number): Promise<void>
  /** Deletes links and sessions that expired before `before`. */
  pruneExpired(before: string): Promise<void>
}
