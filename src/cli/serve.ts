import { existsSync, rmSync } from 'node:fs'
import { DEFAULT_DB, type Config } from '../config.ts'
import { isPostgresLocation } from '../store/open.ts'
import type { Store } from '../store/api.ts'
import { listen } from '../http/server.ts'
import { RequestMetrics } from '../http/metrics.ts'
import { bufferedLineLog } from '../http/line-log.ts'
import { buildApp, buildRoutes, corsOptions, openConfiguredStore } from './app.ts'
import { seedDemo } from './demo.ts'
import { processingForServe } from '../processing/in-serve.ts'
import { webhookDispatcher } from '../processing/webhooks/dispatcher.ts'
import { loadPacer, requestPacer } from '../processing/pacer.ts'
import { webhookMetricsText } from '../processing/webhooks/metrics.ts'
import { eventRetention } from '../processing/event-retention.ts'
import { mailForServe } from '../processing/mail/in-serve.ts'
import { mailMetricsText } from '../processing/mail/metrics.ts'
import { createPortalLink, prunePortalLinks } from '../admin/portal-sessions.ts'

/** Mails per second while requests are being answered (the pacer's trickle, C17). */
const MAIL_RATE_BESIDE_REQUESTS = 50

export interface ServeIo {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT). */
  readonly stopSignal: Promise<string>
}

const SHUTDOWN_GRACE_MS = 10_000
/** A heartbeat write after this long without one, so /readyz sees writes fail within seconds (C12). */
const HEARTBEAT_IDLE_MS = 2_000

/** `replenish serve`: open and migrate the database, listen, log each request, drain on a signal. */
export async function serve(config: Config, options: { demo: boolean }, io: ServeIo): Promise<number> {
  const stdout = bufferedLineLog((chunk) => io.out(chunk.replace(/\n$/, '')))
  const errors = bufferedLineLog((chunk) => io.err(chunk.replace(/\n$/, '')))
  // A SQLite file this start makes is removed again if serve cannot start (a port in use): a
  // typo in --db must not leave an empty database behind (issue 25).
  const made = !isPostgresLocation(config.db) && !existsSync(config.db)
  const store = await openConfiguredStore(config, {
    backgroundCheckpoints: true,
    onBackgroundError: (message) => errors.write({ time: new Date().toISOString(), level: 'error', message }),
  })
  const app = buildApp(config, store, (entry) => errors.write(entry))
  const metrics = new RequestMetrics()
  const processing = processingForServe(store, app.clock, config.processEvery, (entry) => errors.write(entry), config.upcomingDays)
  const logError = (entry: object): void => errors.write(entry)
  let answered = 0
  const pacer = loadPacer({ requestsAnswered: () => answered })
  const dispatcher = webhookDispatcher({ store, retryBaseSeconds: config.webhookRetryBaseSeconds, log: logError, pacer })
  app.endpointsChanged.add(() => dispatcher.refresh())
  const retention = eventRetention({ store, days: config.eventRetentionDays, log: logError })
  // C17: the customers' mails, when REPLENISH_SMTP_URL is set; paced apart from the webhooks.
  // Mails trickle whenever requests are being answered, however busy the loop: a mail costs
  // about 450 µs of CPU, and pacing only above 90 % of the loop let the drain and the pacing take
  // turns every sample (bench:mail, docs/performance.md).
  const mailPacer = requestPacer({ requestsAnswered: () => answered, rate: MAIL_RATE_BESIDE_REQUESTS })
  const mail = mailForServe(config, store, { create: createPortalLink, prune: prunePortalLinks }, logError, mailPacer)
  const routes = buildRoutes(app, metrics, [
    processing.metrics, () => webhookMetricsText(store, Date.now()), () => mailMetricsText(store, Date.now()),
  ], processing.readiness)
  const hint = await noAdminTokenHint(config, store)
  const server = await listen(
    {
      routes,
      maxBodyBytes: config.maxBodyBytes,
      cors: corsOptions(config),
      headersTimeoutMs: config.headersTimeoutMs,
      requestTimeoutMs: config.requestTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      onResponse: (entry) => {
        answered++
        metrics.observe(entry)
        if (config.log === 'json') stdout.write({ time: new Date().toISOString(), ...entry })
      },
      logError: (entry) => errors.write(entry),
    },
    config.host,
    config.port,
  ).catch(async (err: unknown) => {
    // The port is taken, say: leave the database as cleanly as we found it, or not at all.
    await store.stopBackground()
    await store.close()
    if (made) for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(config.db + suffix, { force: true })
    throw err
  })
  io.out(`replenish listening on ${server.url}`)
  store.startHeartbeat(HEARTBEAT_IDLE_MS)
  // Asked before listening, said right after the first line (a demo seeding makes a token).
  const seeded = options.demo ? await seedDemo(store, server.url) : []
  for (const line of seeded) io.err(line)
  if (hint !== undefined && seeded.length === 0) io.err(hint)
  processing.start()
  dispatcher.start()
  retention.start()
  mail?.start()

  const signal = await io.stopSignal
  io.err(`replenish: ${signal} received, finishing in-flight requests`)
  // A processor run stops after its current batch; the database closes only after both.
  await Promise.all([server.close(SHUTDOWN_GRACE_MS), processing.stop(), dispatcher.stop(), retention.stop(), mail?.stop()])
  pacer.stop()
  mailPacer.stop()
  stdout.flush()
  errors.flush()
  // The checkpoint thread's connection goes first, so the server's close is the last one and
  // checkpoints and removes the WAL.
  await store.stopBackground()
  await store.close()
  return 0
}

/**
 * One line when no admin token exists anywhere (no REPLENISH_ADMIN_TOKEN, none stored): every
 * admin call would be a 401 with nothing to say why (issue 25), so serve says how to make one.
 * It names the database as --db would (nothing for the default), never a PostgreSQL URL: it may
 * hold a password.
 */
export async function noAdminTokenHint(config: Config, store: Store): Promise<string | undefined> {
  if (config.adminToken !== undefined) return undefined
  if ((await store.accounts.listAdminTokens(0, 1)).length > 0) return undefined
  const db = config.db
  const command = isPostgresLocation(db)
    ? '`replenish admin-tokens create` with the same REPLENISH_DB'
    : `\`replenish admin-tokens create${db === DEFAULT_DB ? '' : ` --db ${/^[\w./-]+$/.test(db) ? db : JSON.stringify(db)}`}\``
  return `replenish: no admin token yet, so the admin API and /admin/ answer 401: make one with ${command}, or set REPLENISH_ADMIN_TOKEN`
}
