/**
 * `application/x-www-form-urlencoded` with Rails brackets, as lenient as Rack (C1): the outcomes
 * of Rack's normalize_params for the same inputs, bad escapes kept, bare keys null, structure
 * conflicts a 400.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { decodeComponent, parseForm } from '../../src/http/form.ts'
import { HttpError } from '../../src/http/http-error.ts'

/** parseForm answers null-prototype objects; compare them as plain data. */
const parse = (text: string): unknown => JSON.parse(JSON.stringify(parseForm(text)))

function assert400(text: string, error: string): void {
  assert.throws(() => parseForm(text), (err: unknown) => {
    assert.ok(err instanceof HttpError, text)
    assert.equal(err.status, 400)
    assert.deepEqual(err.body, { error })
    return true
  }, text)
}

describe('parseForm', () => {
  test('flat pairs; the last of a repeated key wins; empty pieces are skipped', () => {
    assert.deepEqual(parse('a=1&b=2'), { a: '1', b: '2' })
    assert.deepEqual(parse('a=1&a=2'), { a: '2' })
    assert.deepEqual(parse('&&a=1&&'), { a: '1' })
    assert.deepEqual(parse(''), {})
    assert.deepEqual(parse('a='), { a: '' })
    assert.deepEqual(parse('a==b'), { a: '=b' })
    assert.deepEqual(parse('=1&=&[]=2'), {})
  })

  test('a bare key without = is null', () => {
    assert.deepEqual(parse('a'), { a: null })
    assert.deepEqual(parse('a&b=1'), { a: null, b: '1' })
    assert.deepEqual(parse('subscription[interval_length]'), { subscription: { interval_length: null } })
    assert.deepEqual(parse('a[]&a[]=1'), { a: [null, '1'] })
  })

  test('+ is a space, %XX escapes are UTF-8 bytes, in names and values', () => {
    assert.deepEqual(parse('name=Ada+Lovelace&city=M%C3%BCnchen&e=%F0%9F%93%A6'), { name: 'Ada Lovelace', city: 'München', e: '📦' })
    assert.deepEqual(parse('a%5Bb%5D=1&c%20d=2'), { a: { b: '1' }, 'c d': '2' })
    assert.deepEqual(parse('a=%2B%26%3D'), { a: '+&=' })
  })

  test('bad % escapes are kept literally', () => {
    assert.deepEqual(parse('a=100%'), { a: '100%' })
    assert.deepEqual(parse('a=%zz&b=%4&c=%%41&d=%'), { a: '%zz', b: '%4', c: '%A', d: '%' })
    assert.deepEqual(parse('%zz=1'), { '%zz': '1' })
    assert.deepEqual(parse('a=%E2%82'), { a: '\ufffd' })
    assert.deepEqual(parse('a=%FF'), { a: '\ufffd' })
  })

  test('Rails brackets: nested objects, arrays, arrays of objects, objects of objects', () => {
    assert.deepEqual(parse('subscription[interval_length]=11'), { subscription: { interval_length: '11' } })
    assert.deepEqual(parse('a[b][c]=1&a[b][d]=2&a[e]=3'), { a: { b: { c: '1', d: '2' }, e: '3' } })
    assert.deepEqual(parse('a[]=1&a[]=2'), { a: ['1', '2'] })
    assert.deepEqual(parse('a[][b]=1&a[][c]=2&a[][b]=3'), { a: [{ b: '1', c: '2' }, { b: '3' }] })
    assert.deepEqual(
      parse('subscription[line_items_attributes][0][quantity]=2&subscription[line_items_attributes][0][subscribable_id]=7&subscription[line_items_attributes][1][quantity]=3'),
      { subscription: { line_items_attributes: { 0: { quantity: '2', subscribable_id: '7' }, 1: { quantity: '3' } } } },
    )
    assert.deepEqual(parse('a[][b][c]=1&a[][b][d]=2&a[][b][c]=3'), { a: [{ b: { c: '1', d: '2' } }, { b: { c: '3' } }] })
  })

  test('odd bracket shapes resolve as Rack resolves them', () => {
    assert.deepEqual(parse('a[=1'), { 'a[': '1' })
    assert.deepEqual(parse('[a]=1'), { a: '1' })
    assert.deepEqual(parse('a[[b]]=1'), { a: { b: '1' } })
    assert.deepEqual(parse('a]=1'), { a: '1' })
  })

  test('a scalar given after a structure replaces it (Rack does the same)', () => {
    assert.deepEqual(parse('a[b]=1&a=2'), { a: '2' })
  })

  test('a structure conflict is a 400', () => {
    for (const text of ['a=1&a[b]=2', 'a=1&a[]=2', 'a[]=1&a[b]=2', 'a[b]=1&a[]=2', 'a[b]=1&a[b][c]=2', 'a[b][]=1&a[b][c]=2', 'a[][b]=1&a[][b][c]=2']) {
      assert400(text, 'Invalid form parameters: conflicting structure')
    }
  })

  test('nesting deeper than 32 levels is a 400', () => {
    let deepest: any = parse(`a${'[a]'.repeat(32)}=1`)
    for (let i = 0; i < 33; i++) deepest = deepest.a
    assert.equal(deepest, '1')
    assert400(`a${'[a]'.repeat(40)}=1`, 'Invalid form parameters: nested too deeply')
  })

  test('objects have no prototype: __proto__ and constructor are plain keys', () => {
    const form = parseForm('__proto__[polluted]=1&constructor[prototype][x]=2&a[__proto__][b]=3')
    assert.equal(Object.getPrototypeOf(form), null)
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined)
    assert.deepEqual(Object.keys(form), ['__proto__', 'constructor', 'a'])
    assert.deepEqual(JSON.parse(JSON.stringify(form.a)), { ['__proto__']: { b: '3' } })
  })
})

describe('decodeComponent', () => {
  test('decodes what is valid and keeps what is not', () => {
    assert.equal(decodeComponent('a+b%20c'), 'a b c')
    assert.equal(decodeComponent('caf%C3%A9'), 'café')
    assert.equal(decodeComponent('100%'), '100%')
    assert.equal(decodeComponent('%G0%0'), '%G0%0')
    assert.equal(decodeComponent('ü%20ü'), 'ü ü')
    assert.equal(decodeComponent('😀%21'), '😀!')
    assert.equal(decodeComponent('plain'), 'plain')
  })
})
