import type { Language } from '../messages.ts'
import type { MailKind } from './kinds.ts'
import { MAIL_STRINGS } from './strings.ts'
import { formatDate, formatDay, formatInstant, formatMoney } from './format.ts'
import { htmlMail, type Block } from './html.ts'

/**
 * A customer's mail (C17) from the event it tells of: the subject, a plain-text part and an HTML
 * part that say the same. Pure: the sender (src/processing/mail) supplies the customer's
 * language, the catalogue's names and, for `upcoming`, the one-time portal link it has just made.
 *
 * Prices and totals are shown when the event's object carries them (C16: `price` and `total` on a
 * line, `total` on the subscription or installment, each `null` when unknown); without them the
 * mail lists items and quantities only.
 */
export interface MailInput {
  readonly kind: MailKind
  readonly language: Language
  readonly shopName: string
  /** `#rrggbb` (REPLENISH_SHOP_ACCENT): the link's button. */
  readonly accent: string
  /** REPLENISH_TIME_ZONE: the zone an instant (a link's expiry, a retry) is shown in. */
  readonly timeZone: string
  /** The event's `data.object`: a subscription (`upcoming`, `canceled`) or an installment (`payment_failed`). */
  readonly object: unknown
  /** Catalogue names by subscribable id: a subscription's line items carry only the id. */
  readonly itemNames: ReadonlyMap<number, string>
  /** `upcoming`: the one-time portal link and when it stops working. */
  readonly link?: { readonly url: string; readonly expiresAt: string } | undefined
}

export interface RenderedMail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

interface Line {
  readonly name: string
  readonly quantity: number
  readonly total: string | null
}

/** What a mail shows of its object, read defensively: an event written before C16 has no prices. */
interface Facts {
  readonly firstname: string | null
  readonly date: string | null
  readonly retryAt: string | null
  readonly currency: string
  readonly lines: readonly Line[]
  readonly total: string | null
}

export function renderMail(input: MailInput): RenderedMail {
  const s = MAIL_STRINGS[input.language]
  const lang = input.language
  const facts = factsOf(input)
  const shop = input.shopName
  const money = (amount: string): string => formatMoney(amount, facts.currency, lang)
  const items: Block = {
    kind: 'items',
    lines: facts.lines.map((l) => ({ label: `${l.quantity} × ${l.name}`, amount: l.total === null ? null : money(l.total) })),
    total: facts.total === null ? null : { label: s.total, amount: money(facts.total) },
  }
  const hello: Block = { kind: 'p', text: s.hello(facts.firstname) }
  const footer = s.footer(shop)
  let subject: string
  let blocks: Block[]
  switch (input.kind) {
    case 'upcoming': {
      const date = facts.date ?? ''
      subject = s.upcoming.subject(shop, date === '' ? '' : formatDay(date, lang))
      blocks = [hello, { kind: 'p', text: s.upcoming.intro(shop, date === '' ? '' : formatDate(date, lang)) }, items]
      if (input.link) {
        blocks.push(
          { kind: 'p', text: s.upcoming.change(formatInstant(input.link.expiresAt, lang, input.timeZone)) },
          { kind: 'link', text: s.upcoming.button, url: input.link.url },
        )
      }
      blocks.push({ kind: 'p', text: s.upcoming.nothingToDo })
      break
    }
    case 'payment_failed': {
      subject = s.paymentFailed.subject(shop)
      blocks = [hello, { kind: 'p', text: s.paymentFailed.intro(facts.date === null ? '' : formatDate(facts.date, lang)) }, items]
      const retry = facts.retryAt === null ? '' : `${s.paymentFailed.retry(formatInstant(facts.retryAt, lang, input.timeZone))} `
      blocks.push({ kind: 'p', text: `${retry}${s.paymentFailed.check(shop)}` })
      break
    }
    case 'canceled':
      subject = s.canceled.subject(shop)
      blocks = [hello, { kind: 'p', text: s.canceled.intro }]
      if (facts.lines.length > 0) blocks.push({ kind: 'p', text: s.canceled.items }, { ...items, total: null })
      blocks.push({ kind: 'p', text: s.canceled.mistake(shop) })
      break
  }
  return { subject, text: textMail(blocks, shop, footer), html: htmlMail({ language: lang, title: subject, shop, accent: input.accent, blocks, footer }) }
}

/** The plain-text part: paragraphs, the items in columns, the link on a line of its own. */
function textMail(blocks: readonly Block[], shop: string, footer: string): string {
  const out: string[] = []
  for (const b of blocks) {
    if (b.kind === 'p') out.push(b.text)
    else if (b.kind === 'link') out.push(b.url)
    else {
      const rows = [...b.lines, ...(b.total ? [b.total] : [])]
      const width = Math.min(48, Math.max(0, ...rows.map((r) => r.label.length)))
      const lines = rows.map((r) => (r.amount === null ? `  ${r.label}` : `  ${r.label.padEnd(width)}  ${r.amount}`))
      if (lines.length > 0) out.push(lines.join('\n'))
    }
  }
  out.push(shop, `--\n${footer}`)
  return out.join('\n\n') + '\n'
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null)

function factsOf(input: MailInput): Facts {
  const o = isRecord(input.object) ? input.object : {}
  const s = MAIL_STRINGS[input.language]
  const address = isRecord(o['shipping_address']) ? o['shipping_address'] : isRecord(o['billing_address']) ? o['billing_address'] : {}
  const lines = (Array.isArray(o['line_items']) ? o['line_items'] : []).filter(isRecord).map((li): Line => {
    const id = typeof li['subscribable_id'] === 'number' ? li['subscribable_id'] : 0
    return {
      // An installment's snapshot has the name it had then; a subscription's line names its item.
      name: text(li['name']) ?? input.itemNames.get(id) ?? s.itemFallback(id),
      quantity: typeof li['quantity'] === 'number' ? li['quantity'] : 0,
      total: text(li['total']),
    }
  })
  const total = text(o['total'])
  return {
    firstname: text(address['firstname'])?.trim() || null,
    date: text(input.kind === 'payment_failed' ? o['due_date'] : o['actionable_date']),
    retryAt: text(o['retry_at']),
    currency: text(o['currency']) ?? 'USD',
    lines,
    // A total with a line whose price is unknown would mislead: C16 makes it null then anyway.
    total: lines.some((l) => l.total === null) ? null : total,
  }
}
