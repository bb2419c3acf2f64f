import { createHmac, createSecretKey } from 'node:crypto'

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

/**
 * The key Standard Webhooks signs with: the bytes the secret's text after `whsec_` encodes in
 * base64 (the specification's secret format). Secrets made before issue 29 are in base64url;
 * Node's base64 decoder reads both alphabets, so their key is the same 32 random bytes
 * (docs/decisions.md, "Standard Webhooks").
 */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64')
}

/** The headers that sign one attempt of a delivery (C10, and the Standard Webhooks specification). */
export type SignatureHeaders = Readonly<Record<'replenish-event-id' | 'replenish-signature' | 'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>>

/**
 * Signs attempts with `secrets` (newest first): `Replenish-Signature` as C10 says, and the
 * Standard Webhooks headers beside it: `webhook-id` (the event id), `webhook-timestamp` (the same
 * time as `t=`) and `webhook-signature`, one `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`
 * per secret, space-separated, keyed by the secret's bytes. Keys are decoded once per signer, into
 * KeyObjects: an HMAC keyed by a Buffer costs 13 µs (Node makes a key of it each time), by a
 * KeyObject 2.8 µs, for a 1 KiB body.
 */
export function attemptSigner(secrets: readonly string[]): (eventId: number, unixSeconds: number, rawBody: string) => SignatureHeaders {
  const keys = secrets.map((s) => createSecretKey(standardWebhooksKey(s)))
  return (eventId, unixSeconds, rawBody) => {
    const signed = `${eventId}.${unixSeconds}.${rawBody}`
    return {
      'replenish-event-id': String(eventId),
      'replenish-signature': signatureHeader(secrets, unixSeconds, rawBody),
      'webhook-id': String(eventId),
      'webhook-timestamp': String(unixSeconds),
      'webhook-signature': keys.map((k) => `v1,${createHmac('sha256', k).update(signed).digest('base64')}`).join(' '),
    }
  }
}
