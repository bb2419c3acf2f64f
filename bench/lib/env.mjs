/**
 * The environment every benchmark and drill gives replenish: the caller's own REPLENISH_*
 * settings (a REPLENISH_TODAY, a rate limit) must not leak in, nothing is logged per request, no
 * limit slows the load down, and the schedule does not run the processor on its own.
 */
export function benchEnv(dbFile, extra = {}) {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REPLENISH_')))
  return {
    ...inherited,
    REPLENISH_DB: dbFile,
    REPLENISH_HOST: '127.0.0.1',
    REPLENISH_PORT: '0',
    REPLENISH_LOG: 'off',
    REPLENISH_RATE_LIMIT: '0',
    REPLENISH_AUTH_FAILURE_LIMIT: '0',
    REPLENISH_PROCESS_EVERY: '0',
    REPLENISH_SYNCHRONOUS: 'FULL',
    ...extra,
  }
}
