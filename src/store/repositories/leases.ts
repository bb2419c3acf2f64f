/** The processor's lease and its runs: the repository's records and interfaces, exported by ../api.ts. */

export interface LeaseHolder {
  readonly holder: string
  readonly expires_at: number
}

export interface LeaseReads {
  /** Start of the newest processor run that finished, or null. */
  lastCompletedRunStart(): Promise<string | null>
}

export interface LeasesTx extends LeaseReads {
  /**
   * Takes the lease when it is free, expired, already ours, or its holder `isGone`; answers the
   * holder that keeps it otherwise.
   */
  acquire(name: string, holder: string, expiresAt: number, nowMs: number, isGone: (holder: string) => boolean): Promise<LeaseHolder | undefined>
  renew(name: string, holder: string, expiresAt: number): Promise<boolean>
  release(name: string, holder: string): Promise<void>
  startRun(holder: string, asOf: string, at: string): Promise<number>
  finishRun(id: number, processed: number, at: string): Promise<void>
}
