import type { Config } from '../config.ts'
import { listen } from '../http/server.ts'
import { RequestMetrics } from '../http/metrics.ts'
import { bufferedLineLog } from '../http/line-log.ts'
import { buildApp, buildRoutes, corsOptions, openConfiguredStore } from './app.ts'
import { seedDemo } from './demo.ts'
import { processingForServe } from '../processing/in-serve.ts'
import { webhookDispatcher } from '../processing/webhooks/dispatcher.ts'
import { loadPacer } from '../processing/webhooks/pacer.ts'
import { webhookMetricsText } from '../processing/webhooks/metrics.ts'
import { eventRetention } from '../processing/event-retention.ts'
import { mailForServe } from '../processing/mail/in-serve.ts'
import { mailMetricsText } from '../processing/mail/metrics.ts'
import { createPortalLink, prunePortalLinks } from '../admin/portal-sessions.ts'

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
  const mailPacer = loadPacer({ requestsAnswered: () => answered })
  const mail = mailForServe(config, store, { create: createPortalLink, prune: prunePortalLinks }, logError, mailPacer)
  const routes = buildRoutes(app, metrics, [
    processing.metrics, () => webhookMetricsText(store, Date.now()), () => mailMetricsText(store, Date.now()),
  ], processing.readiness)
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
    await store.close() // the port is taken, say: leave the database as cleanly as we found it
    throw err
  })
  io.out(`replenish listening on ${server.url}`)
  store.startHeartbeat(HEARTBEAT_IDLE_MS)
  if (options.demo) for (const line of await seedDemo(store, server.url)) io.err(line)
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
