/**
 * Admin tokens (C13): listed (never the tokens), made with a scope and a label (the token is shown
 * once, from the create answer, held only in this page's memory until drawn), revoked.
 */
import { field as valueOf, h } from '../../lib/dom.ts'
import { del, get, post, query, type ListPage } from '../api.ts'
import { formDialog } from '../dialog.ts'
import { label, when } from '../format.ts'
import { withQuery } from '../router.ts'
import * as session from '../session.ts'
import { t } from '../strings.ts'
import type { AdminToken } from '../types.ts'
import { actionButton, createForm, dataTable, field, pager, section, select, shownOnce } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'

let justMade: { id: number; token: string } | undefined

function tokenForm(ctx: PageCtx): HTMLElement {
  return createForm(t('admin.tokens.new'), h('div', { class: 'fields' },
    field(t('admin.tokens.scope'), select('scope', ['admin', 'read', 'metrics'].map((s): [string, string] => [s, label('admin.scope', s)]), 'read')),
    field(t('admin.tokens.label'), h('input', { name: 'label', type: 'text', maxlength: '100' }))),
  async (form) => {
    const made = await post<AdminToken>('/admin_tokens', { admin_token: { scope: valueOf(form, 'scope'), label: valueOf(form, 'label') || undefined } })
    justMade = { id: made.id, token: made.token ?? '' }
  }, ctx)
}

function revokeButton(token: AdminToken, ctx: PageCtx): HTMLButtonElement {
  return actionButton(t('admin.tokens.revoke'), async () => {
    const done = await formDialog({
      title: t('admin.tokens.revoke'), body: t('admin.tokens.confirmRevoke', { id: token.id }), submit: t('admin.tokens.revoke'), danger: true,
      onSubmit: async () => void (await del(`/admin_tokens/${token.id}`)),
    })
    if (done) ctx.refresh(t('admin.tokens.revoked'))
  }, 'danger')
}

export const tokensPage: Page = async (ctx) => {
  const after = ctx.query.get('after')
  const page = await get<ListPage<'admin_tokens', AdminToken>>(`/admin_tokens${query({ after })}`)
  const made = justMade
  justMade = undefined
  const mine = session.who()?.id
  const title = t('admin.tokens.title')
  return {
    title,
    content: [
      made ? h('section', { class: 'card' }, shownOnce(t('admin.tokens.shown', { id: made.id }), t('admin.tokens.token'), made.token)) : null,
      section(title,
        // A long label wraps inside its cell: the Revoke button stays in the table (issue 28).
        dataTable<AdminToken>(title, [
          { label: t('admin.id'), cell: (tok) => `#${tok.id}` },
          { label: t('admin.tokens.label'), cell: (tok) => h('span', { class: 'wrap' }, tok.label ?? t('common.none'), tok.id === mine ? ` ${t('admin.tokens.yours')}` : null) },
          { label: t('admin.tokens.scope'), cell: (tok) => label('admin.scopeName', tok.scope) },
          { label: t('admin.tokens.prefix'), cell: (tok) => h('code', null, `${tok.prefix}…`) },
          { label: t('admin.created'), cell: (tok) => when(tok.created_at) },
          { label: t('admin.tokens.lastUsed'), cell: (tok) => (tok.last_used_at ? when(tok.last_used_at) : t('admin.tokens.never')) },
          ...(ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: (tok: AdminToken) => revokeButton(tok, ctx) }] : []),
        ], page.admin_tokens),
        pager(page.next_after, after, (next) => withQuery(['tokens'], { after: next })),
        ctx.canWrite ? tokenForm(ctx) : null),
    ],
  }
}
