/** C18 `users?q=`: a prefix as one range of a byte-ordered, ASCII-folded index (src/domain/search.ts). */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { prefixRange } from '../../src/domain/search.ts'

test('the range of a prefix: folded, trimmed, up to the next text above every match', () => {
  assert.deepEqual(prefixRange('Alice'), { from: 'alice', to: 'alicf' })
  assert.deepEqual(prefixRange('  bob@ '), { from: 'bob@', to: 'bob[' })
  assert.deepEqual(prefixRange('a%_'), { from: 'a%_', to: 'a%`' })
  assert.deepEqual(prefixRange('Élo'), { from: 'Élo', to: 'Élp' })
  assert.deepEqual(prefixRange('z'), { from: 'z', to: '{' })
  assert.deepEqual(prefixRange('a\u{D7FF}'), { from: 'a\u{D7FF}', to: 'a\u{E000}' })
  assert.deepEqual(prefixRange('a\u{10FFFF}'), { from: 'a\u{10FFFF}', to: 'b' })
  assert.deepEqual(prefixRange('\u{10FFFF}'), { from: '\u{10FFFF}', to: null })
  assert.equal(prefixRange(''), undefined)
  assert.equal(prefixRange('   '), undefined)
})

test('every text that starts with the prefix is in the range, and no other (byte order of UTF-8)', () => {
  const texts = ['ann', 'ann@x', 'ann@', 'ann[', 'ann_', 'ann`', 'anna', 'anm', 'ano', 'an', 'ann\u{10FFFF}', 'annÉ', 'é']
  const bytes = (s: string): Buffer => Buffer.from(s, 'utf8')
  for (const prefix of ['ann', 'ann@', 'an', 'ANN', 'é']) {
    const range = prefixRange(prefix)
    assert.ok(range)
    for (const text of texts) {
      // The stores fold ASCII before they compare (NOCASE, lower()): so does the check.
      const folded = text.replace(/[A-Z]/g, (c) => c.toLowerCase())
      const inRange: boolean = Buffer.compare(bytes(folded), bytes(range.from)) >= 0 && (range.to === null || Buffer.compare(bytes(folded), bytes(range.to)) < 0)
      assert.equal(inRange, folded.startsWith(range.from), `${prefix} / ${text}`)
    }
  }
})
