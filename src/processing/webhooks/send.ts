import http from 'node:http'
import https from 'node:https'
import { VERSION } from '../../version.ts'
import { DELIVERY_TIMEOUT_MS } from '../../domain/webhook-schedule.ts'
import type { SignatureHeaders } from '../../domain/webhook-signature.ts'
import type { DeliveryAttempt } from '../../store/api.ts'

/** C10: at most this much of a receiver's answer is kept in the delivery log. */
export const KEPT_RESPONSE_BYTES = 1024
/** Past this, an answer is not read to its end: the connection is dropped instead of reused. */
const DRAINED_RESPONSE_BYTES = 64 * 1024

/** Where an endpoint's deliveries go, over its own keep-alive connections (at most `sockets`, `idle` of them kept). */
export interface Target {
  readonly url: URL
  readonly agent: http.Agent
}

export function newTarget(url: string, sockets: number, idle = sockets): Target {
  const parsed = new URL(url)
  const Agent = parsed.protocol === 'https:' ? https.Agent : http.Agent
  return { url: parsed, agent: new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: idle }) }
}

export interface Sent {
  readonly attempt: DeliveryAttempt
  readonly succeeded: boolean
}

/**
 * One POST of an event (C10): JSON body, signed by `signed` (`Replenish-Signature`,
 * `Replenish-Event-Id` and the Standard Webhooks headers); a 2xx answered within the time-out is
 * success. A redirect is an answer like any other non-2xx: it is not followed (the receiver's
 * address is the one the shop registered). Never rejects: every way it can go wrong is an
 * attempt with an error.
 */
export function post(target: Target, body: string, signed: SignatureHeaders, options: { redelivery: boolean; timeoutMs?: number }): Promise<Sent> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const started = performance.now()
  const attemptedAt = new Date().toISOString()
  const client = target.url.protocol === 'https:' ? https : http
  return new Promise<Sent>((resolve) => {
    let done = false
    const finish = (status: number | null, error: string | null, kept: string | null): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      const succeeded = status !== null && status >= 200 && status < 300 && error === null
      resolve({
        succeeded,
        attempt: {
          status_code: status,
          duration_ms: Math.round(performance.now() - started),
          error: succeeded ? null : (error ?? `the receiver answered ${status}`),
          created_at: attemptedAt,
          response_body: kept,
          redelivery: options.redelivery,
        },
      })
    }
    const req = client.request(target.url, {
      method: 'POST',
      agent: target.agent,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': `replenish/${VERSION} (webhooks)`,
        ...signed,
      },
    })
    const timer = setTimeout(() => {
      req.destroy()
      finish(null, `no answer within ${timeoutMs / 1000} s`, null)
    }, timeoutMs)
    req.on('error', (err: NodeJS.ErrnoException) => finish(null, describe(err), null))
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        if (size < KEPT_RESPONSE_BYTES) chunks.push(chunk.subarray(0, KEPT_RESPONSE_BYTES - size))
        size += chunk.length
        if (size > DRAINED_RESPONSE_BYTES) {
          res.destroy()
          finish(status, redirected(status, res.headers.location), keptText(chunks))
        }
      })
      res.on('end', () => finish(status, redirected(status, res.headers.location), keptText(chunks)))
      res.on('error', (err) => finish(status, describe(err), keptText(chunks)))
    })
    req.end(body)
  })
}

const keptText = (chunks: Buffer[]): string | null => {
  if (chunks.length === 0) return null
  // A multi-byte character cut at the 1 KiB mark would end in U+FFFD: drop it.
  return Buffer.concat(chunks).toString('utf8').replace(/\uFFFD$/, '')
}

const redirected = (status: number, location: string | undefined): string | null =>
  status >= 300 && status < 400 ? `the receiver answered ${status}; redirects are not followed${location ? ` (Location: ${location.slice(0, 200)})` : ''}` : null

function describe(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED': return 'connection refused'
    case 'ECONNRESET': return 'connection reset by the receiver'
    case 'ENOTFOUND': return 'host not found'
    case 'EAI_AGAIN': return 'host name lookup timed out'
    case 'EHOSTUNREACH': return 'host unreachable'
    case 'ETIMEDOUT': return 'connection timed out'
    default: return err.code ? `${err.code}: ${err.message}` : err.message
  }
}
