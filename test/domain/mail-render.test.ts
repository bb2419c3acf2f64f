/**
 * The customers' mails (C17) as the domain renders them: each kind in each language, with prices
 * and a total when the object has them (C16) and without them before, the HTML made for mail
 * clients, and which events make which mail.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { renderMail, type MailInput } from '../../src/domain/mail/render.ts'
import { mailKindOf, MAIL_KINDS } from '../../src/domain/mail/kinds.ts'
import { MAIL_STRINGS } from '../../src/domain/mail/strings.ts'
import { LANGUAGES, type Language } from '../../src/domain/messages.ts'

const ADDRESS = { firstname: 'Ana', lastname: 'García', company: null, address1: 'Calle Mayor 1', address2: null, city: 'Madrid', zipcode: '28013', state_name: null, country_iso: 'ES', phone: null }

/** A subscription as C3 shows it, with C16's money when `priced`. */
function subscription(priced: boolean, state = 'active'): Record<string, unknown> {
  const line = (id: number, subscribable_id: number, quantity: number, price: string, total: string) => ({
    id, subscription_id: 5, subscribable_id, quantity, ...(priced ? { price, discount_percent: '0', total } : {}), created_at: 'x', updated_at: 'x',
  })
  return {
    id: 5, user_id: 1, state, paused: false, interval_length: 1, interval_units: 'month', actionable_date: state === 'canceled' ? null : '2026-03-14',
    end_date: null, currency: 'EUR', shipping_address: ADDRESS, billing_address: null,
    line_items: [line(11, 1, 2, '12.50', '25.00'), line(12, 2, 1, '9.90', '9.90')],
    ...(priced ? { subtotal: '34.90', discount_total: '0.00', total: '34.90' } : {}),
  }
}

const installment = {
  id: 9, subscription_id: 5, user: { id: 1, email: 'ana@example.com', external_id: null }, due_date: '2026-03-14', state: 'retrying',
  retry_at: '2026-03-15T10:00:00.000Z', line_items: [{ subscribable_id: 1, sku: 'TEA-1', name: 'Té verde', quantity: 2 }],
  shipping_address: ADDRESS, billing_address: null, currency: 'EUR',
  attempts: [{ id: 1, installment_id: 9, result: 'payment_failed', order_reference: null, message: 'Card declined', created_at: 'x' }],
}

const NAMES = new Map([[1, 'Té verde <bio>'], [2, 'Tetera']])
const LINK = { url: 'https://shop.example/portal/sessions/rplp_abc', expiresAt: '2026-03-14T10:00:00.000Z' }

const input = (over: Partial<MailInput>): MailInput => ({
  kind: 'upcoming', language: 'en', shopName: 'Tea & Co', accent: '#1d4ed8', timeZone: 'UTC', object: subscription(true), itemNames: NAMES, link: LINK, ...over,
})

test('upcoming, in English with prices: the date, each item with its quantity and line total, the total, the link and when it stops working', () => {
  // ICU puts a narrow no-break space before AM in some versions, a space in others.
  const m = renderMail(input({}))
  const text = m.text.replace('10:00\u202fAM', '10:00 AM')
  assert.equal(m.subject, 'Your next Tea & Co delivery: Saturday, March 14')
  assert.equal(text, [
    'Hello Ana,',
    'Your next delivery from Tea & Co is scheduled for Saturday, March 14, 2026.',
    '  2 × Té verde <bio>  €25.00\n  1 × Tetera          €9.90\n  Total               €34.90',
    'Would you like to skip it, pause your subscription or change something? Open your account with this link. It works once and is valid until March 14, 2026 at 10:00 AM UTC.',
    'https://shop.example/portal/sessions/rplp_abc',
    'If everything looks right, there is nothing you need to do.',
    'Tea & Co',
    '--\nYou receive this e-mail because you have a subscription with Tea & Co. You can turn these e-mails off in your account.',
  ].join('\n\n') + '\n')
})

test('before C16 (no prices in the object) the mail lists the items and quantities only, with no total', () => {
  const m = renderMail(input({ object: subscription(false) }))
  assert.match(m.text, /\n {2}2 × Té verde <bio>\n {2}1 × Tetera\n/)
  assert.doesNotMatch(m.text, /Total|€/)
  assert.doesNotMatch(m.html, /Total|€/)
  // An unknown name falls back to the item's number, in the customer's language.
  assert.match(renderMail(input({ object: subscription(false), itemNames: new Map(), language: 'de' })).text, / {2}2 × Artikel Nr\. 1\n/)
})

test('a total is not shown when a line has no price (C16 makes it null then)', () => {
  const object = subscription(true)
  ;(object['line_items'] as Record<string, unknown>[])[1]!['total'] = null
  const m = renderMail(input({ object }))
  assert.match(m.text, / {2}1 × Tetera\n/)
  assert.doesNotMatch(m.text, /Total/)
})

test('each kind in each language: its own words (nothing left in English), the shop\'s name, dates and money as the language writes them', () => {
  const samples: Record<Language, { day: string; money: string; hello: string }> = {
    en: { day: 'Saturday, March 14', money: '€34.90', hello: 'Hello Ana,' },
    es: { day: 'sábado, 14 de marzo', money: '34,90\u00a0€', hello: 'Hola, Ana:' },
    fr: { day: 'samedi 14 mars', money: '34,90\u00a0€', hello: 'Bonjour Ana,' },
    de: { day: 'Samstag, 14. März', money: '34,90\u00a0€', hello: 'Hallo Ana,' },
  }
  for (const language of LANGUAGES) {
    const upcoming = renderMail(input({ language }))
    assert.ok(upcoming.subject.includes('Tea & Co') && upcoming.subject.includes(samples[language].day), `${language}: ${upcoming.subject}`)
    assert.ok(upcoming.text.startsWith(`${samples[language].hello}\n`), language)
    assert.ok(upcoming.text.includes(samples[language].money), `${language}: ${upcoming.text}`)
    const failed = renderMail(input({ language, kind: 'payment_failed', object: installment, link: undefined }))
    const canceled = renderMail(input({ language, kind: 'canceled', object: subscription(true, 'canceled'), link: undefined }))
    for (const m of [upcoming, failed, canceled]) {
      assert.ok(m.subject.includes('Tea & Co'), m.subject)
      assert.ok(m.html.includes(`<html lang="${language}">`))
    }
    if (language === 'en') continue
    // Every sentence differs from the English one (a string left untranslated would not).
    const en = MAIL_STRINGS.en
    const s = MAIL_STRINGS[language]
    const pairs: [string, string][] = [
      [s.hello('Ana'), en.hello('Ana')], [s.hello(null), en.hello(null)], [s.footer('X'), en.footer('X')], [s.itemFallback(1), en.itemFallback(1)],
      [s.upcoming.subject('X', 'D'), en.upcoming.subject('X', 'D')], [s.upcoming.intro('X', 'D'), en.upcoming.intro('X', 'D')],
      [s.upcoming.change('D'), en.upcoming.change('D')], [s.upcoming.button, en.upcoming.button], [s.upcoming.nothingToDo, en.upcoming.nothingToDo],
      [s.paymentFailed.subject('X'), en.paymentFailed.subject('X')], [s.paymentFailed.intro('D'), en.paymentFailed.intro('D')],
      [s.paymentFailed.retry('D'), en.paymentFailed.retry('D')], [s.paymentFailed.check('X'), en.paymentFailed.check('X')],
      [s.canceled.subject('X'), en.canceled.subject('X')], [s.canceled.intro, en.canceled.intro], [s.canceled.items, en.canceled.items],
      [s.canceled.mistake('X'), en.canceled.mistake('X')],
    ]
    for (const [theirs, english] of pairs) assert.notEqual(theirs, english, `${language}: "${theirs}"`)
  }
})

test('French puts a no-break space before its colons and question marks', () => {
  const m = renderMail(input({ language: 'fr' }))
  assert.match(m.subject, /Tea & Co\u00a0: samedi 14 mars$/)
  assert.match(m.text, /quelque chose\u00a0\? Accédez/)
})

test('payment_failed: the delivery\'s date, its snapshot\'s items, when the payment is tried again; canceled: no date, the items, whom to contact', () => {
  const failed = renderMail(input({ kind: 'payment_failed', object: installment, link: undefined, language: 'es' }))
  assert.equal(failed.subject, 'No hemos podido cobrar su entrega de Tea & Co')
  assert.match(failed.text, /^Hola, Ana:\n\nNo hemos podido procesar el pago de su entrega del sábado, 14 de marzo de 2026\.\n\n {2}2 × Té verde\n\nVolveremos a intentarlo el 15 de marzo de 2026 a las 10:00 UTC\. Compruebe que sus datos de pago en Tea & Co estén actualizados\./)
  assert.doesNotMatch(failed.text, /Card declined/, "the shop's own message is not the customer's")
  const canceled = renderMail(input({ kind: 'canceled', object: subscription(false, 'canceled'), link: undefined, language: 'de' }))
  assert.equal(canceled.subject, 'Ihr Abonnement bei Tea & Co wurde gekündigt')
  assert.match(canceled.text, /^Hallo Ana,\n\nIhr Abonnement wurde gekündigt\. .*\n\nEs umfasste:\n\n {2}2 × Té verde <bio>\n {2}1 × Tetera\n\nFalls Sie nicht kündigen wollten, wenden Sie sich bitte an Tea & Co\./)
})

test('without a first name the greeting is a plain one', () => {
  const object = { ...subscription(false), shipping_address: null }
  assert.match(renderMail(input({ object })).text, /^Hello,\n/)
  assert.match(renderMail(input({ object, language: 'de' })).text, /^Guten Tag,\n/)
})

test('the HTML part: inline styles only, no script, no image, nothing fetched, every text escaped, the link as a button and written out', () => {
  for (const kind of MAIL_KINDS) {
    const object = kind === 'payment_failed' ? installment : subscription(true)
    const { html } = renderMail(input({ kind, object, shopName: 'Tea <b>& Co</b>', link: kind === 'upcoming' ? LINK : undefined }))
    assert.doesNotMatch(html, /<script|<img|<style|<link|<iframe|<form|\bsrc=|url\(|@import/i, kind)
    assert.doesNotMatch(html, /<b>/, 'the shop name is text, not markup')
    assert.match(html, /Tea &#60;b&#62;&#38; Co&#60;\/b&#62;/)
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1])
    assert.deepEqual(hrefs, kind === 'upcoming' ? [LINK.url, LINK.url] : [], 'the only links are the portal link')
    if (kind !== 'payment_failed') assert.match(html, /Té verde &#60;bio&#62;/)
  }
  const { html } = renderMail(input({}))
  assert.match(html, /<td style="border-radius:6px;background-color:#1d4ed8"><a href="https:\/\/shop\.example\/portal\/sessions\/rplp_abc" style="[^"]*color:#ffffff[^"]*">Manage my subscription<\/a>/)
  assert.match(html, /<td style="[^"]*font-weight:bold[^"]*">Total<\/td><td align="right" style="[^"]*">€34\.90<\/td>/)
})

test('which events make which mail: upcoming, canceled, and a failed installment whose last attempt is payment_failed', () => {
  const never = (): never => {
    throw new Error('a subscription event is not parsed')
  }
  assert.equal(mailKindOf('subscription.upcoming', never), 'upcoming')
  assert.equal(mailKindOf('subscription.canceled', never), 'canceled')
  assert.equal(mailKindOf('installment.failed', () => installment), 'payment_failed')
  const attempts = [...installment.attempts, { ...installment.attempts[0], result: 'out_of_stock' }]
  assert.equal(mailKindOf('installment.failed', () => ({ ...installment, attempts })), undefined, 'out of stock is the shop\'s problem')
  assert.equal(mailKindOf('installment.failed', () => ({ attempts: [] })), undefined)
  for (const type of ['subscription.created', 'subscription.cancellation_pending', 'subscription.ended', 'installment.abandoned', 'installment.retry_scheduled']) {
    assert.equal(mailKindOf(type, never), undefined, type)
  }
})
