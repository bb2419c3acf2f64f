import { test } from 'node:test'
import assert from 'node:assert/strict'
import { LANGUAGES, MESSAGES, negotiateLanguage, translate, type MessageKey } from '../../src/domain/messages.ts'

test('every message has a non-empty text in en, es, fr and de, each with the same placeholders', () => {
  const keys = Object.keys(MESSAGES) as MessageKey[]
  assert.ok(keys.length >= 20)
  for (const key of keys) {
    const texts: Record<string, string> = MESSAGES[key]
    assert.deepEqual(Object.keys(texts).sort(), [...LANGUAGES].sort(), key)
    const placeholders = (s: string): string[] => s.match(/%\{\w+\}/g) ?? []
    for (const language of LANGUAGES) {
      const text = texts[language] as string
      assert.ok(text.trim().length > 0, `${key}.${language}`)
      assert.deepEqual(placeholders(text), placeholders(texts['en'] as string), `${key}.${language}`)
    }
    // A translation is a translation: only the English text is English.
    for (const language of ['es', 'fr', 'de'] as const) assert.notEqual(texts[language], texts['en'], `${key}.${language}`)
  }
})

test('the C4, C8 and C16 texts in English are exactly the contract wording', () => {
  const expected: Partial<Record<MessageKey, string>> = {
    not_a_number: 'is not a number',
    not_an_integer: 'must be an integer',
    greater_than_0: 'must be greater than 0',
    inclusion: 'is not included in the list',
    invalid_date: 'is not a valid date',
    today_or_later: 'must be today or later',
    after_today: 'must be after today',
    invalid_currency: 'is not a valid currency code',
    cannot_subscribe: 'The requested item cannot be subscribed',
    blank: "can't be blank",
    invalid: 'is invalid',
    invalid_payment: 'Invalid payment method or source',
    cannot_skip_paused: 'cannot skip a subscription which is paused',
    cannot_skip_ended: 'cannot skip a subscription which is canceled or inactive',
    cannot_pause: 'cannot pause/resume a subscription which is not active',
    invalid_amount: 'is not a valid amount',
    between_0_and_100: 'must be between 0 and 100',
  }
  for (const [key, text] of Object.entries(expected)) assert.equal(translate(key as MessageKey, 'en'), text, key)
  assert.equal(translate('less_than_or_equal_to', 'en', 120), 'must be less than or equal to 120')
  assert.equal(translate('less_than_or_equal_to', 'de', 120), 'muss kleiner oder gleich 120 sein')
  assert.equal(translate('unknown_currency', 'en', 'XYZ'), 'has an unknown currency: XYZ') // C16
})

test('Accept-Language negotiation: quality values, region fallbacks, unknown → en', () => {
  const cases: [string | undefined, string][] = [
    [undefined, 'en'],
    ['', 'en'],
    ['es', 'es'],
    ['es-MX', 'es'],
    ['ES-mx', 'es'],
    ['fr-CA,fr;q=0.9', 'fr'],
    ['de-DE', 'de'],
    ['pt-BR', 'en'],
    ['x-klingon', 'en'],
    ['*', 'en'],
    ['en;q=0.5, de;q=0.8', 'de'],
    ['de;q=0.2, es;q=0.7, fr;q=0.5', 'es'],
    ['pt-BR, fr;q=0.3', 'fr'],
    ['ja, zh;q=0.9, es-MX;q=0.1', 'es'],
    ['fr;q=0, de', 'de'],
    ['fr;q=0', 'en'],
    ['es , fr', 'es'],
    ['de;q=1.0, fr;q=1', 'de'],
    ['fr; q=0.8, en; q=0.7', 'fr'],
    ['en-US,en;q=0.9', 'en'],
  ]
  for (const [header, language] of cases) assert.equal(negotiateLanguage(header), language, String(header))
})
