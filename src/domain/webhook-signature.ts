import { createHmac } from 'node:crypto'

/**
 * The `Replenish-Signature` header (C10): `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
 * one `v1=` entry per secret, the newest first (C13: for 24 h after a rotation the old secret signs too).
 */
export function signatureHeader(secrets: readonly string[], unixSeconds: number, rawBody: string): string {
  const signed = `${unixSeconds}.${rawBody}`
  return [`t=${unixSeconds}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(signed).digest('hex')}`)].join(',')
}

/** The secrets a delivery signs with now: the endpoint's, then the previous one until it expires. */
export function signingSecrets(s: { readonly secret: string; readonly previous_secret: string | null; readonly previous_secret_expires_at: string | null }, nowMs: number): string[] {
  const previousValid = s.previous_secret !== null && s.previous_secret_expires_at !== null && Date.parse(s.previous_secret_expires_at) > nowMs
  return previousValid ? [s.secret, s.previous_secret as string] : [s.secret]
}
