import type { Config } from '../../config.ts'
import type { Store, Tx } from '../../store/api.ts'
import type { Pacer } from '../pacer.ts'
import { mailSender, type Sender, type SenderOptions } from './sender.ts'
import { smtpTransport, type SmtpTimeouts } from './transport.ts'

/** How `serve` makes its portal links: src/admin/portal-sessions.ts, handed in by the CLI. */
export interface LinkMaker {
  create(tx: Tx, userId: number, returnUrl: string | null, expiresAt: string, now: string): Promise<string>
  prune(tx: Tx, nowMs: number): Promise<void>
}

/** Dead portal links are swept at most this often by the sender's units. */
const PRUNE_EVERY_MS = 60_000

/**
 * The mail sender `serve` runs when REPLENISH_SMTP_URL is set (C17), or undefined without it.
 * Config has checked that the sender's address and the links' base come with it.
 */
export function mailForServe(
  config: Config, store: Store, links: LinkMaker, log: (entry: object) => void, pacer: Pacer,
  tuning: Partial<Pick<SenderOptions, 'pollMs' | 'random' | 'concurrency' | 'retryWindowMs'>> & { readonly timeouts?: Partial<SmtpTimeouts> } = {},
): Sender | undefined {
  if (config.smtpUrl === undefined || config.mailFrom === undefined || config.publicUrl === undefined) return undefined
  let prunedAt = 0
  return mailSender({
    store,
    transport: smtpTransport({
      url: config.smtpUrl, tlsInsecure: config.smtpTlsInsecure, caFile: config.smtpCaFile, connections: tuning.concurrency, timeouts: tuning.timeouts,
    }),
    settings: {
      shopName: config.shopName,
      accent: config.shopAccent,
      timeZone: config.timeZone,
      publicUrl: config.publicUrl,
      from: config.mailFrom,
      defaultLocale: config.defaultLocale,
      linkHours: config.mailLinkHours,
    },
    retryBaseSeconds: config.mailRetryBaseSeconds,
    async createLink(tx, userId, expiresAt, now) {
      const nowMs = Date.parse(now)
      if (nowMs - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = nowMs
        await links.prune(tx, nowMs)
      }
      return links.create(tx, userId, null, expiresAt, now)
    },
    log,
    pacer,
    ...tuning,
  })
}
