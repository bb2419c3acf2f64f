/** What a browser does with a portal link, done with fetch: for the server-side tests of test/web. */
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, type TestServer } from '../helpers/server.ts'

/** A link made through the admin API (C14), as the shop's backend makes it. */
export async function newLink(server: TestServer, userId: number, portalSession: Record<string, unknown> = {}): Promise<string> {
  const res = await server.request('POST', `/admin/api/v1/users/${userId}/portal_sessions`, { key: ADMIN_TOKEN, json: { portal_session: portalSession } })
  assert.equal(res.status, 201, res.text)
  return res.body.url as string
}

/** Opens a link without following the redirect, so the test sees the 303 and its cookie. */
export function openLink(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { redirect: 'manual', headers })
}

export interface Signed {
  /** `replenish_portal=<id>`, as the browser sends it back. */
  readonly cookie: string
  readonly csrf: string
}

/** Opens a fresh link and reads the session's CSRF token, as the portal's script does. */
export async function signIn(server: TestServer, userId: number): Promise<Signed> {
  const res = await openLink(await newLink(server, userId))
  assert.equal(res.status, 303)
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string
  const session = await server.request('GET', '/portal/api/session', { headers: { cookie } })
  assert.equal(session.status, 200, session.text)
  return { cookie, csrf: session.body.csrf_token as string }
}

/** The headers of a portal page's request: the cookie, and for a write the CSRF token. */
export function asPortal(signed: Signed, withCsrf = true): Record<string, string> {
  return withCsrf ? { cookie: signed.cookie, 'x-csrf-token': signed.csrf } : { cookie: signed.cookie }
}
