import type { WebhookEndpoint, WebhookSecrets, WebhooksTx } from '../api.ts'
import { changed } from './conflict.ts'
import { nowIso } from './rows.ts'
import { Secret, lockedInUnit, type Sql } from './sql.ts'

/** The columns an endpoint is shown with: never its secrets. */
const SHOWN = 'id, url, events, description, disabled, created_at, updated_at'

/** A row of SHOWN: `events` is the JSON text stored (the outbox trigger reads it as such). */
interface EndpointRow {
  readonly id: number
  readonly url: string
  readonly events: string
  readonly description: string | null
  readonly disabled: boolean
  readonly created_at: string
  readonly updated_at: string
}

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  description: r.description,
  disabled: r.disabled,
  created_at: r.created_at,
  updated_at: r.updated_at,
})

/** Webhook endpoints (C11): where events are delivered, and the secrets deliveries are signed with. */
export function webhooksRepo(sql: Sql): WebhooksTx {
  return {
    async createEndpoint(e) {
      const now = nowIso()
      // JSON.stringify as SQLite stores it: the outbox trigger matches `["*"]` by its text.
      const row = await sql.one<EndpointRow>(
        `INSERT INTO webhook_endpoints (url, events, description, secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${SHOWN}`,
        [e.url, JSON.stringify(e.events), e.description, new Secret(e.secret), now],
      )
      return toEndpoint(row as EndpointRow)
    },
    async findEndpoint(id) {
      const r = await sql.one<EndpointRow>(`SELECT ${SHOWN} FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL${lockedInUnit(sql)}`, [id])
      return r && toEndpoint(r)
    },
    listEndpoints: async (after, limit) =>
      (await sql.rows<EndpointRow>(`SELECT ${SHOWN} FROM webhook_endpoints WHERE id > $1 AND deleted_at IS NULL ORDER BY id LIMIT $2`, [after, limit])).map(toEndpoint),
    secretsOf: (id) =>
      sql.one<WebhookSecrets>('SELECT secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL', [id]),
    async rotateSecret(id, secret, previousValidMs) {
      const now = nowIso()
      // One clock reading for both: the old secret expires exactly `previousValidMs` after the rotation.
      const expires = new Date(Date.parse(now) + previousValidMs).toISOString()
      const row = await sql.one<EndpointRow>(
        `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $1, secret = $2, updated_at = $3
          WHERE id = $4 AND deleted_at IS NULL RETURNING ${SHOWN}`,
        [expires, new Secret(secret), now, id],
      )
      return toEndpoint(changed(row, `webhook endpoint ${id}`))
    },
    async updateEndpoint(id, p) {
      // An absent field keeps its value (SQLite's statement, the same way).
      const row = await sql.one<EndpointRow>(
        `UPDATE webhook_endpoints SET url = coalesce($1, url), events = coalesce($2, events),
          description = CASE WHEN $3 THEN $4 ELSE description END, disabled = coalesce($5, disabled), updated_at = $6
          WHERE id = $7 AND deleted_at IS NULL RETURNING ${SHOWN}`,
        [p.url ?? null, p.events === undefined ? null : JSON.stringify(p.events), p.description !== undefined, p.description ?? null, p.disabled ?? null, nowIso(), id],
      )
      return toEndpoint(changed(row, `webhook endpoint ${id}`))
    },
    async deleteEndpoint(id) {
      const now = nowIso()
      await sql.run(
        `UPDATE webhook_endpoints SET deleted_at = $1, updated_at = $1, secret = '', previous_secret = NULL, previous_secret_expires_at = NULL
          WHERE id = $2 AND deleted_at IS NULL`,
        [now, id],
      )
    },
  }
}
