import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Verifies replenish's `Replenish-Signature` header (docs/webhooks.md, "Verifying the signature"):
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the whole whsec_… secret>`,
 * with one `v1=` per secret that signs (two for 24 h after a rotation). True when `t` is within
 * `toleranceSeconds` of now and any `v1` matches; false for anything else, including no header.
 *
 * `rawBody` must be the bytes as received: parsing the JSON and serialising it again changes them.
 */
export function verifyReplenishSignature(rawBody: Buffer, header: string | undefined, secret: string, options: { toleranceSeconds?: number; now?: number } = {}): boolean {
  const { toleranceSeconds = 300, now = Date.now() } = options
  if (header === undefined) return false
  let timestamp: number | undefined
  const candidates: Buffer[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 1) return false
    const name = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (name === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return false
      timestamp = Number(value)
    } else if (name === 'v1' && /^[0-9a-f]{64}$/.test(value)) {
      candidates.push(Buffer.from(value, 'hex'))
    }
    // Entries of other names (a later scheme, v2=) are ignored.
  }
  if (timestamp === undefined || candidates.length === 0) return false
  // A captured request cannot be replayed later: each attempt is signed anew with its own time.
  if (Math.abs(now / 1000 - timestamp) > toleranceSeconds) return false
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest()
  return candidates.some((candidate) => timingSafeEqual(candidate, expected))
}
