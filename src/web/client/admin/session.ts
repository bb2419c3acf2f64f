/**
 * The staff session (docs/console.md): the pasted admin token in sessionStorage, sent as
 * `Authorization: Bearer` by api.ts. No cookie, so a cross-site request carries nothing to act
 * with (CSRF-safe by construction); the tab's storage ends with the tab.
 */
const TOKEN = 'replenish.admin.token'
const WHO = 'replenish.admin.who'

export type Scope = 'admin' | 'read' | 'metrics'

/** What GET /admin_tokens/current answered for the token. */
export interface Who {
  readonly id: number | null
  readonly scope: Scope
  readonly label: string | null
  readonly prefix: string | null
}

export function token(): string | null {
  return sessionStorage.getItem(TOKEN)
}

export function who(): Who | null {
  const raw = sessionStorage.getItem(WHO)
  return raw === null ? null : (JSON.parse(raw) as Who)
}

export function signIn(value: string, identity: Who): void {
  sessionStorage.setItem(TOKEN, value)
  sessionStorage.setItem(WHO, JSON.stringify(identity))
}

export function signOut(): void {
  sessionStorage.removeItem(TOKEN)
  sessionStorage.removeItem(WHO)
}

/**
 * Whether to show write controls. Only a convenience: the API refuses any write of a `read`
 * token with 403 whatever the page shows (C13), and this is decided by the API's answer.
 */
export const canWrite = (): boolean => who()?.scope === 'admin'
