import { renderMail } from '../../domain/mail/render.ts'
import type { Language } from '../../domain/messages.ts'
import type { DueEmail } from '../../store/api.ts'
import type { OutgoingMail } from './transport.ts'

/** What every mail needs from the configuration (C17). */
export interface MailSettings {
  readonly shopName: string
  readonly accent: string
  readonly timeZone: string
  /** REPLENISH_PUBLIC_URL: the portal link starts with it. */
  readonly publicUrl: string
  /** REPLENISH_MAIL_FROM. */
  readonly from: string
  readonly defaultLocale: Language
  /** REPLENISH_MAIL_LINK_HOURS. */
  readonly linkHours: number
}

/**
 * A due mail with its event's object read (undefined when the event is gone) and the one-time link
 * its unit made for it (upcoming mails only).
 */
export type ClaimedEmail = DueEmail & {
  readonly object: unknown
  readonly link?: { readonly token: string; readonly expiresAt: string } | undefined
}

/** A due mail with its event's object read once. */
export function withObject(m: DueEmail): DueEmail & { readonly object: unknown } {
  return { ...m, object: m.data === null ? undefined : (JSON.parse(m.data) as { object?: unknown }).object }
}

export type Composed =
  | { readonly mail: OutgoingMail; readonly subject: string }
  /** Not to be sent, and why (C17: an erased customer, or one who turned e-mail off, gets nothing). */
  | { readonly skip: string }

/** The portal link a mail carries: the token is in it, so the link lives only in the mail itself. */
export const portalLinkUrl = (publicUrl: string, token: string): string => `${publicUrl}/portal/sessions/${token}`

/**
 * The message for a due mail, rendered now: in the customer's language as it stands, to their
 * address as it stands. The Message-ID is the same for every attempt of one mail, so a receiver
 * that got an attempt we could not record as sent may recognise the repeat.
 */
export function composeMail(m: ClaimedEmail, itemNames: ReadonlyMap<number, string>, s: MailSettings, now: Date): Composed {
  if (m.email === null) return { skip: 'not sent: the customer has no e-mail address (erased)' }
  if (!m.email_notifications) return { skip: 'not sent: the customer turned e-mail notifications off' }
  if (m.data === null) return { skip: 'not sent: its event is no longer kept (REPLENISH_EVENT_RETENTION_DAYS)' }
  const language = m.locale ?? s.defaultLocale
  const object = m.object
  const link = m.link ? { url: portalLinkUrl(s.publicUrl, m.link.token), expiresAt: m.link.expiresAt } : undefined
  const rendered = renderMail({ kind: m.kind, language, shopName: s.shopName, accent: s.accent, timeZone: s.timeZone, object, itemNames, link })
  const address = senderAddress(s.from)
  return {
    subject: rendered.subject,
    mail: {
      from: { name: senderName(s.from) ?? s.shopName, address },
      to: m.email,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      messageId: `<replenish.${m.kind}.${m.id}.${m.created_ms}@${address.slice(address.lastIndexOf('@') + 1)}>`,
      date: now,
      language,
    },
  }
}

/** The display name of `Shop <shop@example.com>` (its quotes taken off), or null for a bare address. */
export function senderName(from: string): string | null {
  const m = /^\s*(.*?)\s*<[^<>]+>\s*$/.exec(from)
  if (!m) return null
  const name = (m[1] as string).replace(/^"(.*)"$/, '$1').replace(/\\(.)/g, '$1')
  return name === '' ? null : name
}

/** The address of `shop@example.com` or `Shop <shop@example.com>`. */
export function senderAddress(from: string): string {
  const m = /<([^<>]+)>\s*$/.exec(from)
  return (m ? (m[1] as string) : from).trim()
}

/** The catalogue ids a subscription's lines name (an installment's snapshot carries its names). */
export function itemIdsOf(m: ClaimedEmail): number[] {
  if (m.kind === 'payment_failed') return []
  const object = m.object as { line_items?: unknown } | undefined
  const lines = Array.isArray(object?.line_items) ? (object.line_items as { subscribable_id?: unknown }[]) : []
  return lines.map((l) => l.subscribable_id).filter((id): id is number => typeof id === 'number')
}
