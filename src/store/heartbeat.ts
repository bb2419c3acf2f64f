/**
 * A small real write whenever none has been tried for a while (issue 15, item 2). /readyz reports
 * the outcome of the last write (store.writeProblem): without writes of its own, a server nobody
 * writes to would say ready on a full disk, a read-only file or a lock held elsewhere, and would
 * never notice that the cause has gone. Never on a request's path: a timer runs it, and only
 * while no write is queued or open.
 */
export interface Heartbeat {
  stop(): void
}

export interface HeartbeatTarget {
  /** Milliseconds since the last write was tried; 0 while one is queued or open. */
  idleFor(): number
  /** One committed write of one tiny row; rejects as any write would. */
  beat(): Promise<void>
}

export function startHeartbeat(idleMs: number, target: HeartbeatTarget): Heartbeat {
  let beating = false
  const timer = setInterval(() => {
    if (beating || target.idleFor() < idleMs) return
    beating = true
    // A failure is recorded by the writer, which is what /readyz reads; nothing else to do here.
    target.beat().catch(() => undefined).finally(() => {
      beating = false
    })
  }, Math.max(10, Math.floor(idleMs / 4)))
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
