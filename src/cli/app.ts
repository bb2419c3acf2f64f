import { getHeapStatistics } from 'node:v8'
import { ConfigError, DEFAULT_DB, type Config } from '../config.ts'
import { serviceClock } from '../clock.ts'
import type { Store } from '../store/api.ts'
import { openStore, type StoreOptions } from '../store/open.ts'
import type { App } from '../api/kit/app.ts'
import { requestLimits } from '../api/kit/limits.ts'
import type { Route } from '../http/types.ts'
import type { CorsOptions } from '../http/cors.ts'
import { customerRoutes } from '../api/v1/routes.ts'
import { adminRoutes } from '../admin/routes.ts'
import { webRoutes } from '../web/routes.ts'
import { opsRoutes, type MetricsSource, type Readiness } from '../admin/ops.ts'
import type { RequestMetrics } from '../http/metrics.ts'
import { transitionHooks } from '../api/kit/subscription-actions.ts'
import { abandonOnCancel } from '../processing/installment-actions.ts'
import { withMailOutbox } from '../processing/mail/outbox.ts'

/**
 * Opens the store the configuration names; only the default location has its directory made for
 * it. With e-mail configured (C17), every command's events also queue their mails (`replenish
 * process` beside `serve` included), for `serve` to send.
 */
export async function openConfiguredStore(config: Config, extra: Pick<StoreOptions, 'beforeCommit' | 'backgroundCheckpoints' | 'onBackgroundError'> = {}): Promise<Store> {
  checkReadCacheFits(config.readCacheMb, getHeapStatistics().heap_size_limit)
  const store = await openStore(config.db, {
    synchronous: config.synchronous,
    createDirectory: config.db === DEFAULT_DB,
    readCacheBytes: config.readCacheMb * 1024 * 1024,
    postgres: { poolSize: config.dbPool, statementTimeoutMs: config.dbStatementTimeoutMs },
    ...extra,
  })
  return config.smtpUrl === undefined ? store : withMailOutbox(store)
}

/** The composition root: everything a handler may use, built once. */
export function buildApp(config: Config, store: Store, logError: (entry: object) => void = stderrLine): App {
  // C9: a cancel abandons the subscription's pending and retrying installments in the same unit.
  transitionHooks.onCanceled = (tx, sub) => abandonOnCancel(tx, sub)
  return {
    config,
    store,
    clock: serviceClock(config.timeZone, config.today),
    keyCache: new Map(),
    keyCacheMs: KEY_CACHE_MS,
    limits: requestLimits({ rate: config.rateLimit, burst: config.rateBurst, authFailures: config.authFailureLimit }),
    logError,
    endpointsChanged: new Set(),
  }
}

/** SQLite: a key seen in the last 10 s authenticates without a read (auth.ts). */
const KEY_CACHE_MS = 10_000

const stderrLine = (entry: object): void => void process.stderr.write(JSON.stringify(entry) + '\n')

/** C13: browsers from the configured origins may call the customer API, and nothing else. */
export function corsOptions(config: Config): CorsOptions {
  return { origins: config.corsOrigins, pathPrefix: '/api/v1/' }
}

export function buildRoutes(app: App, metrics: RequestMetrics, sources: readonly MetricsSource[], readiness: Readiness): Route[] {
  return [...opsRoutes(app, metrics, sources, readiness), ...customerRoutes(app), ...adminRoutes(app), ...webRoutes(app)]
}

/**
 * The read cache lives in V8's heap, which the binary caps (build.mjs) to keep its memory small:
 * a cache that could fill a third of it would risk an out-of-memory crash under load, so it is
 * refused at start, with the way out.
 */
export function checkReadCacheFits(cacheMb: number, heapLimitBytes: number): void {
  const limitMb = Math.floor(heapLimitBytes / 1048576)
  if (cacheMb * 3 <= limitMb) return
  throw new ConfigError(
    `--read-cache-mb / REPLENISH_READ_CACHE_MB: ${cacheMb} MB does not fit a V8 heap of ${limitMb} MB (at most a third of it: ${Math.floor(limitMb / 3)}); ` +
      `lower it, or raise the heap: replenish --node-options=--max-old-space-size=${cacheMb * 4} …`,
  )
}
