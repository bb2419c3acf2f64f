import type { DatabaseSync } from 'node:sqlite'
import { nowIso, type Row } from './rows.ts'
import type { NewWebhookEndpoint, WebhookEndpoint, WebhookEndpointPatch, WebhookSecrets } from '../api.ts'

/** The columns an endpoint is shown with: never its secrets. */
const SHOWN = 'id, url, events, description, disabled, created_at, updated_at'

const toEndpoint = (r: Row): WebhookEndpoint => ({
  id: r['id'] as number,
  url: r['url'] as string,
  events: JSON.parse(r['events'] as string) as string[],
  description: r['description'] as string | null,
  disabled: r['disabled'] === 1,
  created_at: r['created_at'] as string,
  updated_at: r['updated_at'] as string,
})

/** Webhook endpoints (C11): where events are delivered, and the secrets deliveries are signed with. */
export function webhooksStore(db: DatabaseSync) {
  const insert = db.prepare(`INSERT INTO webhook_endpoints (url, events, description, secret, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?) RETURNING ${SHOWN}`)
  const byId = db.prepare(`SELECT ${SHOWN} FROM webhook_endpoints WHERE id = ? AND deleted_at IS NULL`)
  const after = db.prepare(`SELECT ${SHOWN} FROM webhook_endpoints WHERE id > ? AND deleted_at IS NULL ORDER BY id LIMIT ?`)
  const secrets = db.prepare(`SELECT secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints
    WHERE id = ? AND deleted_at IS NULL`)
  const rotate = db.prepare(`UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ?
    WHERE id = ? AND deleted_at IS NULL RETURNING ${SHOWN}`)
  // An absent field keeps its value: url, events and disabled are never null; description may
  // be set to null, so whether it was given is a separate argument.
  const update = db.prepare(`UPDATE webhook_endpoints SET url = coalesce(?1, url), events = coalesce(?2, events),
    description = CASE WHEN ?3 THEN ?4 ELSE description END, disabled = coalesce(?5, disabled), updated_at = ?6
    WHERE id = ?7 AND deleted_at IS NULL RETURNING ${SHOWN}`)
  const remove = db.prepare(`UPDATE webhook_endpoints SET deleted_at = ?, updated_at = ?, secret = '', previous_secret = NULL,
    previous_secret_expires_at = NULL WHERE id = ? AND deleted_at IS NULL`)

  return {
    createEndpoint(e: NewWebhookEndpoint): WebhookEndpoint {
      const now = nowIso()
      return toEndpoint(insert.get(e.url, JSON.stringify(e.events), e.description, e.secret, now, now) as Row)
    },
    findEndpoint(id: number): WebhookEndpoint | undefined {
      const r = byId.get(id) as Row | undefined
      return r ? toEndpoint(r) : undefined
    },
    listEndpoints(afterId: number, limit: number): WebhookEndpoint[] {
      return (after.all(afterId, limit) as Row[]).map(toEndpoint)
    },
    secretsOf(id: number): WebhookSecrets | undefined {
      const r = secrets.get(id) as Row | undefined
      return r ? { secret: r['secret'] as string, previous_secret: r['previous_secret'] as string | null, previous_secret_expires_at: r['previous_secret_expires_at'] as string | null } : undefined
    },
    rotateSecret(id: number, secret: string, previousValidMs: number): WebhookEndpoint {
      const now = nowIso()
      // One clock reading for both: the old secret expires exactly `previousValidMs` after the rotation.
      const expires = new Date(Date.parse(now) + previousValidMs).toISOString()
      return toEndpoint(rotate.get(expires, secret, now, id) as Row)
    },
    updateEndpoint(id: number, p: WebhookEndpointPatch): WebhookEndpoint {
      const events = p.events === undefined ? null : JSON.stringify(p.events)
      const disabled = p.disabled === undefined ? null : p.disabled ? 1 : 0
      return toEndpoint(update.get(p.url ?? null, events, p.description !== undefined ? 1 : 0, p.description ?? null, disabled, nowIso(), id) as Row)
    },
    deleteEndpoint(id: number): void {
      const now = nowIso()
      remove.run(now, now, id)
    },
  }
}
export type WebhooksStore = ReturnType<typeof webhooksStore>
