/**
 * One customer (C13, C17, C18): their details and everything a person changes about them — email,
 * external id, language and e-mail settings, API keys (made, shown once, revoked), payment sources,
 * a one-time portal link to copy, and erasure behind a typed confirmation — with their
 * subscriptions and mail log. Changes are previewed from a dry run before they are confirmed.
 */
import { field as valueOf, h, type Child } from '../../lib/dom.ts'
import { ApiError, all, del, dry, get, patch, post, query, type ListPage } from '../api.ts'
import { changeList, languageName, userChanges } from '../changes.ts'
import { formDialog } from '../dialog.ts'
import { label, when } from '../format.ts'
import { withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { ApiKey, PaymentMethod, PaymentSource, Subscription, User } from '../types.ts'
import { actionButton, checkbox, createForm, dataTable, facts, field, pager, section, select, shownOnce } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'
import { emailsSection } from './emails.ts'
import { namesFor, subscriptionTable } from './subscriptions.ts'

const LOCALES = ['en', 'es', 'fr', 'de'] as const
/** Kinds of payment source the form offers (the API takes any word; these have names on the page). */
const KINDS = ['card', 'sepa_debit', 'paypal', 'bank_transfer'] as const

/** A payment source in words: its kind (a SEPA mandate is not a card), brand, last digits, expiry. */
export function sourceText(s: PaymentSource): string {
  return [s.kind ? label('admin.kind', s.kind) : null, s.brand, s.last_digits ? `•••• ${s.last_digits}` : null,
    s.month && s.year ? `${String(s.month).padStart(2, '0')}/${s.year}` : null].filter(Boolean).join(' ') || t('common.none')
}

/** What was just made and is shown once (an API key, a portal link): drawn by the next page, then forgotten. */
let shown: { userId: number; kind: 'key' | 'link'; value: string; note: string } | undefined

function editDialog(user: User, ctx: PageCtx): Promise<void> {
  const fields: HTMLElement[] = [
    field(t('admin.email'), h('input', { type: 'email', name: 'email', value: user.email ?? '', autocomplete: 'off' })),
    field(t('admin.externalId'), h('input', { type: 'text', name: 'external_id', value: user.external_id ?? '', autocomplete: 'off' }), t('admin.customer.externalIdHint')),
  ]
  // C17's settings, once the API has them.
  if (user.locale !== undefined) fields.push(field(t('admin.field.locale'), select('locale', LOCALES.map((l): [string, string] => [l, `${languageName(l)} (${l})`]), user.locale)))
  if (user.email_notifications !== undefined) fields.push(checkbox('email_notifications', t('admin.field.email_notifications'), user.email_notifications))
  const body = (form: HTMLFormElement) => {
    const out: Record<string, unknown> = {}
    const email = valueOf(form, 'email')
    if (email !== (user.email ?? '')) out['email'] = email
    const externalId = valueOf(form, 'external_id')
    if (externalId !== (user.external_id ?? '')) out['external_id'] = externalId || null
    if (user.locale !== undefined && valueOf(form, 'locale') !== user.locale) out['locale'] = valueOf(form, 'locale')
    const notify = form.elements.namedItem('email_notifications')
    if (notify instanceof HTMLInputElement && notify.checked !== user.email_notifications) out['email_notifications'] = notify.checked
    return { user: out }
  }
  return formDialog({
    title: t('admin.customer.edit', { id: user.id }), fields, submit: t('common.save'),
    preview: async (form) => changeList(userChanges(user, await dry.patch<User>(`/users/${user.id}`, body(form)))),
    onSubmit: async (form) => void (await patch(`/users/${user.id}`, body(form))),
  }).then((done) => { if (done) ctx.refresh(t('admin.saved')) })
}

/** Erasure (C13) cannot be undone: the person types the customer's email to confirm it. */
function eraseDialog(user: User, subs: readonly Subscription[], ctx: PageCtx): Promise<void> {
  const acting = subs.filter((s) => s.state !== 'canceled' && s.state !== 'inactive').length
  const typed = h('input', { type: 'text', name: 'confirmation', autocomplete: 'off', spellcheck: 'false' })
  return formDialog({
    title: t('admin.customer.erase'),
    body: t('admin.customer.eraseBody', { email: user.email ?? '', count: acting }),
    fields: [field(t('admin.customer.eraseType', { email: user.email ?? '' }), typed)],
    submit: t('admin.customer.erase'), danger: true,
    onSubmit: async (form) => {
      // Refused here as the API refuses a field: named and marked.
      if (valueOf(form, 'confirmation') !== user.email) throw new ApiError(422, '', { confirmation: [t('admin.customer.eraseMismatch')] })
      await post(`/users/${user.id}/erase`)
    },
  }).then((done) => { if (done) ctx.refresh(t('admin.customer.erased')) })
}

async function portalLink(user: User, ctx: PageCtx): Promise<void> {
  const made = await post<{ url: string; expires_at: string }>(`/users/${user.id}/portal_sessions`, { portal_session: {} })
  shown = { userId: user.id, kind: 'link', value: made.url, note: t('admin.customer.linkMade', { time: when(made.expires_at) }) }
  ctx.refresh()
}

function keysSection(user: User, keys: readonly ApiKey[], ctx: PageCtx): HTMLElement {
  const revoke = (k: ApiKey) => actionButton(t('admin.tokens.revoke'), async () => {
    const done = await formDialog({
      title: t('admin.customer.revokeKey'), body: t('admin.customer.confirmRevokeKey', { prefix: k.prefix }), submit: t('admin.tokens.revoke'), danger: true,
      onSubmit: async () => void (await del(`/api_keys/${k.id}`)),
    })
    if (done) ctx.refresh(t('admin.customer.keyRevoked'))
  }, 'danger')
  const make = actionButton(t('admin.customer.newKey'), async () => {
    const done = await formDialog({
      title: t('admin.customer.newKey'), body: t('admin.customer.newKeyBody'), submit: t('admin.create'),
      onSubmit: async () => {
        const made = await post<ApiKey>(`/users/${user.id}/api_keys`)
        shown = { userId: user.id, kind: 'key', value: made.key ?? '', note: t('admin.customer.keyShown') }
      },
    })
    if (done) ctx.refresh()
  }, 'secondary')
  return section(t('admin.customer.keys'),
    dataTable<ApiKey>(t('admin.customer.keys'), [
      { label: t('admin.id'), cell: (k) => `#${k.id}` },
      { label: t('admin.tokens.prefix'), cell: (k) => h('code', null, `${k.prefix}…`) },
      { label: t('admin.created'), cell: (k) => when(k.created_at) },
      { label: t('admin.tokens.lastUsed'), cell: (k) => (k.last_used_at ? when(k.last_used_at) : t('admin.tokens.never')) },
      { label: t('admin.state'), cell: (k) => (k.revoked_at ? t('admin.customer.revokedAt', { time: when(k.revoked_at) }) : t('admin.customer.keyActive')) },
      ...(ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: (k: ApiKey) => (k.revoked_at ? null : revoke(k)) }] : []),
    ], keys),
    ctx.canWrite && user.email !== null ? h('div', { class: 'row' }, make) : null)
}

function sourcesSection(user: User, sources: readonly PaymentSource[], methods: readonly PaymentMethod[], subs: readonly Subscription[], ctx: PageCtx): HTMLElement {
  const methodName = (id: number) => methods.find((m) => m.id === id)?.name ?? `#${id}`
  const remove = (s: PaymentSource) => actionButton(t('admin.customer.deleteSource'), async () => {
    const using = subs.filter((x) => x.payment_source_id === s.id).map((x) => `#${x.id}`)
    const done = await formDialog({
      title: t('admin.customer.deleteSource'),
      body: using.length === 0 ? t('admin.customer.confirmDeleteSource', { id: s.id })
        : t('admin.customer.confirmDeleteSourceUsed', { id: s.id, subscriptions: using.join(', ') }),
      submit: t('admin.customer.deleteSource'), danger: true,
      onSubmit: async () => void (await del(`/payment_sources/${s.id}`)),
    })
    if (done) ctx.refresh(t('admin.customer.sourceDeleted'))
  }, 'danger')
  return section(t('admin.customer.paymentSources'),
    dataTable<PaymentSource>(t('admin.customer.paymentSources'), [
      { label: t('admin.id'), cell: (s) => `#${s.id}` },
      { label: t('admin.source.method'), cell: (s) => methodName(s.payment_method_id) },
      { label: t('admin.source.details'), cell: sourceText },
      { label: t('admin.field.gateway_reference'), cell: (s) => s.gateway_reference ?? t('common.none') },
      ...(ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: remove }] : []),
    ], sources),
    ctx.canWrite && user.email !== null ? sourceForm(user, methods, ctx) : null)
}

function sourceForm(user: User, methods: readonly PaymentMethod[], ctx: PageCtx): HTMLElement {
  return createForm(t('admin.customer.newSource'), h('div', { class: 'fields' },
    field(t('admin.source.method'), select('payment_method_id', methods.filter((m) => m.active).map((m): [string, string] => [String(m.id), m.name]))),
    field(t('admin.field.kind'), select('kind', KINDS.map((k): [string, string] => [k, label('admin.kind', k)]))),
    field(t('admin.field.brand'), h('input', { type: 'text', name: 'brand', autocomplete: 'off' })),
    field(t('admin.field.last_digits'), h('input', { type: 'text', name: 'last_digits', inputmode: 'numeric', maxlength: '4', autocomplete: 'off' })),
    field(t('admin.field.month'), h('input', { type: 'number', name: 'month', min: '1', max: '12' })),
    field(t('admin.field.year'), h('input', { type: 'number', name: 'year', min: '2000', max: '2100' })),
    field(t('admin.field.gateway_reference'), h('input', { type: 'text', name: 'gateway_reference', autocomplete: 'off' }))),
  (form) => {
    const optional = (name: string) => valueOf(form, name) || undefined
    return post('/payment_sources', { payment_source: {
      user_id: user.id, payment_method_id: valueOf(form, 'payment_method_id'), kind: valueOf(form, 'kind'),
      brand: optional('brand'), last_digits: optional('last_digits'), month: optional('month'), year: optional('year'), gateway_reference: optional('gateway_reference'),
    } })
  }, ctx)
}

export const customerPage: Page = async (ctx) => {
  const id = Number(ctx.params[0])
  const user = await get<User>(`/users/${Number.isInteger(id) && id > 0 ? id : 0}`)
  const after = ctx.query.get('after')
  const [subs, sources, methods, keys] = await Promise.all([
    get<ListPage<'subscriptions', Subscription>>(`/subscriptions${query({ user_id: user.id, after })}`),
    all<'payment_sources', PaymentSource>('payment_sources', `/payment_sources?user_id=${user.id}`),
    all<'payment_methods', PaymentMethod>('payment_methods', '/payment_methods'),
    all<'api_keys', ApiKey>('api_keys', `/users/${user.id}/api_keys`),
  ])
  const names = await namesFor(subs.subscriptions)
  const made = shown?.userId === user.id ? shown : undefined
  shown = undefined
  const erased = user.email === null
  const actions: Child = ctx.canWrite && !erased ? h('div', { class: 'row actions-row', role: 'group', 'aria-label': t('admin.customer.actions') },
    actionButton(t('admin.edit'), () => editDialog(user, ctx), 'secondary'),
    actionButton(t('admin.customer.portalLink'), () => portalLink(user, ctx), 'secondary'),
    actionButton(t('admin.customer.erase'), () => eraseDialog(user, subs.subscriptions, ctx), 'danger')) : null
  return {
    title: t('admin.customer.title', { id: user.id }),
    content: [
      made ? h('section', { class: 'card' }, shownOnce(made.note, made.kind === 'key' ? t('admin.customer.key') : t('admin.customer.link'), made.value)) : null,
      section(t('admin.sub.details'), facts([
        [t('admin.email'), user.email ?? t('admin.erased')],
        [t('admin.externalId'), user.external_id ?? t('common.none')],
        ...(user.locale === undefined ? [] : [[t('admin.field.locale'), languageName(user.locale)] as [string, Child]]),
        ...(user.email_notifications === undefined ? [] : [[t('admin.field.email_notifications'), user.email_notifications ? t('admin.yes') : t('admin.no')] as [string, Child]]),
        [t('admin.created'), when(user.created_at)],
      ]), actions),
      section(t('admin.customer.subscriptions'), subscriptionTable(t('admin.customer.subscriptions'), subs.subscriptions, names),
        pager(subs.next_after, after, (next) => withQuery(['customers', String(user.id)], { after: next }))),
      sourcesSection(user, sources, methods, subs.subscriptions, ctx),
      keysSection(user, keys, ctx),
      emailsSection({ user_id: user.id }, t('admin.mail.ofCustomer')),
    ],
  }
}
