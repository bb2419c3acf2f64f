import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  FULL_DISCOUNT, MAX_AMOUNT, costOf, formatAmount, formatPercent, lineMoney, minorOf, multiply, parseAmount, parsePercent, percentOf, totalsOf,
} from '../../src/domain/money.ts'
import { codesByDigits, currencyCode, minorDigits } from '../../src/domain/currency.ts'

// C16: money is a string with exactly the currency's minor-unit digits, as Intl.NumberFormat
// gives them; all arithmetic in integer minor units; discounts rounded half-up per line.

test('minor-unit digits come from Intl.NumberFormat: JPY 0, USD and EUR 2, BHD 3, CLF 4', () => {
  assert.equal(minorDigits('JPY'), 0)
  assert.equal(minorDigits('USD'), 2)
  assert.equal(minorDigits('EUR'), 2)
  assert.equal(minorDigits('BHD'), 3)
  assert.equal(minorDigits('KWD'), 3)
  assert.equal(minorDigits('CLF'), 4)
  for (const code of Intl.supportedValuesOf('currency')) {
    assert.equal(minorDigits(code), new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits, code)
  }
  const byDigits = codesByDigits()
  assert.ok(byDigits.get(0)?.includes('JPY'))
  assert.ok(byDigits.get(3)?.includes('BHD'))
  assert.ok(byDigits.get(4)?.includes('CLF'))
  assert.ok(![...byDigits.values()].some((codes) => codes.includes('USD')))
})

test('currency codes: ISO 4217 and every code Intl.supportedValuesOf names, in any case', () => {
  for (const code of Intl.supportedValuesOf('currency')) assert.equal(currencyCode(code.toLowerCase()), code)
  assert.equal(currencyCode('xau'), 'XAU')
  assert.equal(currencyCode('XYZ'), undefined)
  assert.equal(currencyCode('US'), undefined)
  assert.equal(currencyCode(840), undefined)
})

test('amounts are formatted with exactly the currency digits, whatever the exponent', () => {
  assert.equal(formatAmount(1250n, 'USD'), '12.50')
  assert.equal(formatAmount(5, 'USD'), '0.05')
  assert.equal(formatAmount(0n, 'USD'), '0.00')
  assert.equal(formatAmount(1250n, 'JPY'), '1250')
  assert.equal(formatAmount(0n, 'JPY'), '0')
  assert.equal(formatAmount(1250n, 'BHD'), '1.250')
  assert.equal(formatAmount(7n, 'BHD'), '0.007')
  assert.equal(formatAmount(12345n, 'CLF'), '1.2345')
  assert.equal(formatAmount(-5n, 'USD'), '-0.05')
})

test('parseAmount reads decimal strings into minor units, for every exponent', () => {
  assert.equal(parseAmount('12.50', 'USD'), 1250n)
  assert.equal(parseAmount('12.5', 'USD'), 1250n)
  assert.equal(parseAmount('12', 'USD'), 1200n)
  assert.equal(parseAmount('0', 'USD'), 0n)
  assert.equal(parseAmount('0.01', 'EUR'), 1n)
  assert.equal(parseAmount('1250', 'JPY'), 1250n)
  assert.equal(parseAmount('1.250', 'BHD'), 1250n)
  assert.equal(parseAmount('1.25', 'BHD'), 1250n)
  assert.equal(parseAmount('0.001', 'BHD'), 1n)
  assert.equal(parseAmount('007.10', 'USD'), 710n)
})

test('parseAmount refuses numbers, exponents, signs, blanks, extra digits and amounts above 1000000', () => {
  const refused: [unknown, string][] = [
    [12.5, 'USD'], [12, 'USD'], [null, 'USD'], [true, 'USD'], [{}, 'USD'], [['1'], 'USD'],
    ['1e3', 'USD'], ['1E3', 'USD'], ['1.5e2', 'USD'], ['-1', 'USD'], ['-0.01', 'USD'], ['+1', 'USD'],
    ['', 'USD'], [' 1', 'USD'], ['1 ', 'USD'], ['.5', 'USD'], ['5.', 'USD'], ['1,50', 'USD'], ['1.2.3', 'USD'],
    ['0x10', 'USD'], ['Infinity', 'USD'], ['NaN', 'USD'], ['١٢', 'USD'],
    ['12.505', 'USD'], ['12.5', 'JPY'], ['1250.0', 'JPY'], ['1.2505', 'BHD'],
    ['1000000.01', 'USD'], ['1000001', 'JPY'], ['1000000.001', 'BHD'], ['99999999999999999999999', 'USD'],
  ]
  for (const [value, currency] of refused) assert.equal(parseAmount(value, currency), undefined, `${JSON.stringify(value)} ${currency}`)
  assert.equal(parseAmount('1000000', 'USD'), 100000000n)
  assert.equal(parseAmount('1000000.00', 'USD'), 100000000n)
  assert.equal(parseAmount('1000000', 'JPY'), 1000000n)
  assert.equal(parseAmount('1000000.000', 'BHD'), 1000000000n)
  assert.equal(parseAmount('1000000.0000', 'CLF'), 10000000000n)
  assert.equal(MAX_AMOUNT, 1_000_000)
})

test('the largest line loses no cent: 1000000.00 × 9999, and 1000000.0000 CLF × 9999 less 33.33 %', () => {
  const unit = parseAmount('1000000.00', 'USD') as bigint
  assert.equal(formatAmount(multiply(unit, 9999), 'USD'), '9999000000.00')
  assert.equal(lineMoney(9999, unit, 0, 'USD').total, '9999000000.00')
  // 999999.99 × 9999 = 9998999900.01: a float product gives 9998999900.009998
  const odd = parseAmount('999999.99', 'USD') as bigint
  assert.equal(lineMoney(9999, odd, 0, 'USD').total, '9998999900.01')
  // Beyond 2^53 in the discount's product: 10^10 × 9999 × 3333 = 3.3e17.
  const clf = parseAmount('1000000.0000', 'CLF') as bigint
  const line = lineMoney(9999, clf, 3333, 'CLF')
  assert.equal(line.price, '1000000.0000')
  // 99990000000000 minor × 0.3333 = 33326667000000 exactly; total = 66663333000000 minor.
  assert.equal(line.total, '6666333300.0000')
  const cost = costOf(9999, clf, 3333)
  assert.equal(cost.discount, 33326667000000n)
  assert.ok((cost.amount as bigint) * 3333n > BigInt(Number.MAX_SAFE_INTEGER))
})

test('percentages round half-up to the minor unit, at every .5 boundary', () => {
  assert.equal(percentOf(5n, 1000), 1n) // 0.5 → 1
  assert.equal(percentOf(4n, 1000), 0n) // 0.4 → 0
  assert.equal(percentOf(15n, 1000), 2n) // 1.5 → 2
  assert.equal(percentOf(25n, 1000), 3n) // 2.5 → 3 (half-up, not half-even)
  assert.equal(percentOf(1n, 5000), 1n) // 0.5 → 1
  assert.equal(percentOf(3n, 5000), 2n) // 1.5 → 2
  assert.equal(percentOf(1n, 4999), 0n) // 0.4999 → 0
  assert.equal(percentOf(10000n, 1), 1n) // 0.01 % of 100.00 = 0.01
  assert.equal(percentOf(5000n, 1), 1n) // 0.5 → 1
  assert.equal(percentOf(4999n, 1), 0n) // 0.4999 → 0
  assert.equal(percentOf(999n, FULL_DISCOUNT), 999n)
  assert.equal(percentOf(999n, 0), 0n)
  // JPY: 3 × ¥105 less 12.5 % = 315 − 39.375 → 39 (39.375 rounds down), BHD: 3 fils digits.
  assert.deepEqual(lineMoney(3, 105n, 1250, 'JPY'), { price: '105', discount_percent: '12.5', total: '276' })
  assert.deepEqual(lineMoney(1, 1005n, 5000, 'BHD'), { price: '1.005', discount_percent: '50', total: '0.502' }) // 502.5 → 503 off
  assert.deepEqual(lineMoney(1, 1005n, 5000, 'USD'), { price: '10.05', discount_percent: '50', total: '5.02' })
})

test('the discount is rounded per line, on the line amount, not per unit', () => {
  // 3 × 0.05 less 10 %: per line 0.015 → 0.02 off, 0.13; per unit it would be 3 × 0.01 off, 0.12.
  assert.equal(lineMoney(3, 5n, 1000, 'USD').total, '0.13')
  // Two lines of 0.05 less 10 % each round on their own: 0.01 + 0.01 off, not 0.01 on 0.10.
  const lines = [costOf(1, 5n, 1000), costOf(1, 5n, 1000)]
  assert.deepEqual(totalsOf(lines, 'USD'), { subtotal: '0.10', discount_total: '0.02', total: '0.08' })
})

test('totals: sums of the lines, null when any line has no price, zero without lines', () => {
  assert.deepEqual(totalsOf([costOf(2, 1250n, 1000), costOf(1, 399n, 0)], 'USD'), { subtotal: '28.99', discount_total: '2.50', total: '26.49' })
  assert.deepEqual(totalsOf([costOf(2, 1250n, 1000), costOf(1, null, 0)], 'USD'), { subtotal: null, discount_total: null, total: null })
  assert.deepEqual(totalsOf([], 'USD'), { subtotal: '0.00', discount_total: '0.00', total: '0.00' })
  assert.deepEqual(totalsOf([], 'JPY'), { subtotal: '0', discount_total: '0', total: '0' })
  assert.deepEqual(lineMoney(2, null, 1000, 'USD'), { price: null, discount_percent: '10', total: null })
})

test('discount percents: "0"…"100" with at most 2 decimals, kept in basis points, shown without trailing zeros', () => {
  const ok: [unknown, number, string][] = [
    ['0', 0, '0'], ['100', 10000, '100'], ['12.5', 1250, '12.5'], ['12.50', 1250, '12.5'], ['0.05', 5, '0.05'],
    ['99.99', 9999, '99.99'], ['100.00', 10000, '100'], ['007', 700, '7'], ['0.10', 10, '0.1'], [10, 1000, '10'], [12.25, 1225, '12.25'],
  ]
  for (const [value, bp, shown] of ok) {
    assert.deepEqual(parsePercent(value), { basisPoints: bp }, String(value))
    assert.equal(formatPercent(bp), shown)
  }
  const refused: [unknown, string][] = [
    ['100.01', 'between_0_and_100'], ['101', 'between_0_and_100'], ['-1', 'between_0_and_100'], ['-0.5', 'between_0_and_100'],
    ['1000', 'between_0_and_100'], [150, 'between_0_and_100'],
    ['12.345', 'percent_decimals'], ['0.001', 'percent_decimals'], [0.125, 'percent_decimals'],
    ['abc', 'not_a_number'], ['1e2', 'not_a_number'], ['', 'not_a_number'], [' 5', 'not_a_number'], ['.5', 'not_a_number'],
    [null, 'not_a_number'], [true, 'not_a_number'], [Number.NaN, 'not_a_number'], [{}, 'not_a_number'],
  ]
  for (const [value, problem] of refused) assert.deepEqual(parsePercent(value), { problem }, String(value))
})

test('minorOf reads back an amount this service wrote', () => {
  assert.equal(minorOf('12.50'), 1250n)
  assert.equal(minorOf('1250'), 1250n)
  assert.equal(minorOf('0.007'), 7n)
  assert.equal(minorOf(null), null)
})
