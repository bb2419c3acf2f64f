/** Idempotency-Key answers (C5): the repository's records and interfaces, exported by ../api.ts. */

export interface StoredResponse {
  readonly fingerprint: string
  readonly status: number
  readonly body: string
}

export interface IdempotencyReads {
  find(scope: string, key: string, notBefore: string): Promise<StoredResponse | undefined>
}

export interface IdempotencyTx extends IdempotencyReads {
  /**
   * Takes the key for this unit before it acts (C5, across instances): answers the response a
   * request with this key already committed since `notBefore`, or undefined, and then the key is
   * this unit's until it ends. PostgreSQL: a placeholder row, so a concurrent claim of the same key
   * (another instance) waits on its unique index for this unit, then finds its answer and replays.
   * SQLite: the one writer serialises units, so a read is enough.
   */
  claim(scope: string, key: string, fingerprint: string, at: string, notBefore: string): Promise<StoredResponse | undefined>
  save(scope: string, key: string, fingerprint: string, status: number, body: string, at: string): Promise<void>
}
