/**
 * `GET /admin/api/v1/users?q=` (C18): a case-insensitive prefix of the email, the external id or
 * the part of the email after `@`. Both stores compare ASCII-folded text byte-wise (SQLite's
 * lower() and NOCASE, PostgreSQL's lower() under COLLATE "C" fold ASCII only), so a prefix is
 * one range of an index: from the folded prefix itself up to `to`, the least text above every
 * text that starts with it. A range has no wildcards, so `%`, `_` and `\` in `q` are plain
 * characters, with nothing to escape.
 */
export interface PrefixRange {
  readonly from: string
  /** Exclusive; null when no text is above every match (a prefix of U+10FFFF only). */
  readonly to: string | null
}

/** ASCII letters folded as the stores fold them; other letters are compared as they are. */
export const foldAscii = (text: string): string => text.replace(/[A-Z]/g, (c) => c.toLowerCase())

/**
 * The range of the prefix `q` (trimmed), or undefined when it can match nothing (a NUL, which
 * no stored text holds and PostgreSQL refuses to be sent) or is empty (no search).
 */
export function prefixRange(q: string): PrefixRange | undefined {
  const from = foldAscii(q.trim())
  if (from === '' || from.includes('\u0000')) return undefined
  return { from, to: above(from) }
}

/** The prefix with its last code point moved up by one (byte order of UTF-8 is code point order). */
function above(prefix: string): string | null {
  const points = [...prefix].map((c) => c.codePointAt(0) as number)
  while (points.length > 0) {
    let next = (points.pop() as number) + 1
    if (next > 0x10ffff) continue
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000
    // `@` + 1 is `A`, which NOCASE reads as `a`: a range up to it would take in `[`…`` ` ``. No
    // folded text holds A–Z, so the next character that can follow is `[`.
    if (next >= 0x41 && next <= 0x5a) next = 0x5b
    return String.fromCodePoint(...points, next)
  }
  return null
}
