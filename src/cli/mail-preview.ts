import type { Config } from '../config.ts'
import { addDays } from '../domain/dates.ts'
import { isMailKind, MAIL_KINDS, type MailKind } from '../domain/mail/kinds.ts'
import { renderMail } from '../domain/mail/render.ts'
import { LANGUAGES, type Language } from '../domain/messages.ts'
import { serviceClock } from '../clock.ts'
import { portalLinkUrl, senderAddress } from '../processing/mail/compose.ts'
import { UsageError } from './commands.ts'

/**
 * `replenish mail-preview KIND [--locale es] [--html]` (docs/email.md): a customer's mail as this
 * configuration writes it (shop name, accent, time zone, REPLENISH_PUBLIC_URL, link lifetime),
 * for a made-up customer with two items priced in REPLENISH_CURRENCY. The headers and the plain
 * text by default; `--html`, the HTML part alone (to open in a browser). Touches no database.
 */
export function mailPreviewCommand(config: Config, kind: string | undefined, locale: string | undefined, html: boolean, out: (line: string) => void): number {
  if (!isMailKind(kind)) throw new UsageError(`usage: replenish mail-preview ${MAIL_KINDS.join('|')} [--locale ${LANGUAGES.join('|')}] [--html]`)
  const language = locale ?? config.defaultLocale
  if (!(LANGUAGES as readonly string[]).includes(language)) throw new UsageError(`--locale: expected one of ${LANGUAGES.join(', ')}, got ${JSON.stringify(language)}`)
  const clock = serviceClock(config.timeZone, config.today)
  const now = clock.now()
  const object = sample(kind, clock.today(), config.currency, now)
  const link = kind === 'upcoming'
    ? { url: portalLinkUrl(config.publicUrl ?? 'https://shop.example', 'rplp_PREVIEW-the-real-link-is-made-when-the-mail-is-sent'), expiresAt: new Date(now.getTime() + config.mailLinkHours * 3_600_000).toISOString() }
    : undefined
  const mail = renderMail({
    kind, language: language as Language, shopName: config.shopName, accent: config.shopAccent, timeZone: config.timeZone, object,
    itemNames: new Map([[1, SAMPLE_ITEMS[0].name], [2, SAMPLE_ITEMS[1].name]]), link,
  })
  if (html) {
    out(mail.html.replace(/\n$/, ''))
    return 0
  }
  const from = config.mailFrom ?? 'shop@example.com'
  // One write: a reader that stops early (`| head`) cuts it, not the next line's write.
  out([
    `From: ${from.includes('<') ? from : `${config.shopName} <${senderAddress(from)}>`}`,
    'To: ana@example.com',
    `Subject: ${mail.subject}`,
    `Date: ${now.toUTCString()}`,
    `Content-Language: ${language}`,
    '',
    mail.text.replace(/\n$/, ''),
  ].join('\n'))
  return 0
}

const SAMPLE_ITEMS = [
  { id: 1, name: 'House blend coffee, 1 kg', quantity: 2, minor: 1250 },
  { id: 2, name: 'Paper filters, pack of 100', quantity: 1, minor: 490 },
] as const

/** A subscription (or, for payment_failed, its installment) with C16's prices, as an event would carry it. */
function sample(kind: MailKind, today: string, currency: string, now: Date): Record<string, unknown> {
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  const amount = (minor: number): string => (minor / 10 ** digits).toFixed(digits)
  const lines = SAMPLE_ITEMS.map((i) => ({
    subscribable_id: i.id, ...(kind === 'payment_failed' ? { sku: `SKU-${i.id}`, name: i.name } : {}), quantity: i.quantity,
    price: amount(i.minor), discount_percent: '0', total: amount(i.minor * i.quantity),
  }))
  const total = amount(SAMPLE_ITEMS.reduce((n, i) => n + i.minor * i.quantity, 0))
  const address = { firstname: 'Ana', lastname: 'García', company: null, address1: '1 Market Street', address2: null, city: 'Portland', zipcode: '97205', state_name: null, country_iso: 'US', phone: null }
  if (kind === 'payment_failed') {
    return { due_date: today, retry_at: new Date(now.getTime() + 86_400_000).toISOString(), currency, line_items: lines, shipping_address: address, total }
  }
  return {
    state: kind === 'canceled' ? 'canceled' : 'active', actionable_date: kind === 'canceled' ? null : addDays(today, 3), currency,
    line_items: lines, shipping_address: address, subtotal: total, discount_total: amount(0), total,
  }
}
