import { ApiError } from '../lib/api.ts'
import { confirmDialog } from '../lib/dialog.ts'
import { h, replace } from '../lib/dom.ts'
import { formatDateTime } from '../lib/format.ts'
import { addressCard } from './address-card.ts'
import { deliveriesCard } from './deliveries-card.ts'
import { deliveryCard } from './delivery-card.ts'
import { frequency, itemsSummary, nextDelivery, stateBadge, totalText } from './describe.ts'
import { byId, clearOutcome, problemOf, showOutcome, type Outcome } from './feedback.ts'
import { itemsCard } from './items-card.ts'
import type { EventItem, Installment, Key, ListPage, Portal, Subscription } from './portal.ts'
import { scheduleCard } from './schedule-card.ts'
import { card, type Change, type SubscriptionView } from './view.ts'

/** Installments read at a time (the customer API's pages, C3). */
const INSTALLMENTS_PAGE = 20

/**
 * `#/subscriptions/:id`: one subscription and everything the customer may do with it. Every
 * change is a call to the customer API, whose answer (or 422 messages, in the page's language)
 * is shown as it comes: the rules live there, not here. A subscription the API does not show
 * (another customer's: 401; none: 404) shows nothing but that it cannot be shown.
 */
export async function showSubscription(portal: Portal, id: string): Promise<void> {
  const { t, page } = portal
  replace(page.main, h('p', { class: 'loading', role: 'status' }, t('common.loading')))
  const view = new DetailView(portal, `/api/v1/subscriptions/${encodeURIComponent(id)}`)
  try {
    await view.load()
  } catch (err) {
    return notShown(portal, err)
  }
  view.mount()
}

async function notShown(portal: Portal, err: unknown): Promise<void> {
  const { t, page } = portal
  if (err instanceof ApiError && err.status === 401 && !(await portal.stillSignedIn())) return portal.sessionEnded()
  const heading = h('h1', { tabindex: '-1' }, t('portal.not_found'))
  replace(page.main, backLink(portal), heading,
    err instanceof ApiError && (err.status === 401 || err.status === 404) ? null : h('p', { class: 'problem', role: 'alert' }, err instanceof ApiError ? err.message : t('common.error')))
  heading.focus()
}

function backLink(portal: Portal): HTMLElement {
  return h('p', null, h('a', { href: '#/' }, `← ${portal.t('portal.back_to_list')}`))
}

/** Where the last change's message goes, and what it says. */
interface Said {
  readonly at: string
  readonly card: string
  readonly outcome: Outcome
}

class DetailView implements SubscriptionView {
  readonly portal: Portal
  private readonly url: string
  sub!: Subscription
  events: readonly EventItem[] = []
  installments: readonly Installment[] = []
  moreInstallments = false
  private installmentPages = 1
  private readonly content = h('div')
  private busy = false

  constructor(portal: Portal, url: string) {
    this.portal = portal
    this.url = url
  }

  path(suffix = ''): string {
    return `/api/v1/subscriptions/${this.sub.id}${suffix}`
  }

  /** The subscription (unless `sub` is its answer already), its history and the installments shown so far, read again. */
  async load(sub?: Subscription): Promise<void> {
    const { api } = this.portal
    this.sub = sub ?? (await api.get<Subscription>(this.url))
    const [events, installments] = await Promise.all([
      api.get<{ events: EventItem[] }>(this.path('/events?per_page=50')),
      this.readInstallments(1, this.installmentPages * INSTALLMENTS_PAGE),
    ])
    this.events = events.events
    this.installments = installments.installments
    this.moreInstallments = installments.current_page < installments.pages
  }

  private readInstallments(page: number, perPage: number): Promise<ListPage & { installments: Installment[] }> {
    return this.portal.api.get(this.path(`/installments?page=${page}&per_page=${Math.min(perPage, 100)}`))
  }

  mount(): void {
    replace(this.portal.page.main, backLink(this.portal), this.content)
    this.render()
    byId(this.content, 'subscription-heading')?.focus()
  }

  /**
   * Redraws from the record. What the customer typed and did not send yet stays typed (the
   * inputs whose value is not the one drawn, the boxes not as drawn); so does the refused form's
   * input after a refusal.
   */
  private render(said?: Said): void {
    const drafts = new Map<string, string | boolean>()
    for (const input of this.content.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input[id], select[id]')) {
      if (input instanceof HTMLInputElement && input.type === 'checkbox') {
        if (input.checked !== input.defaultChecked) drafts.set(input.id, input.checked)
        continue
      }
      const drawn = input instanceof HTMLSelectElement ? [...input.options].find((o) => o.defaultSelected)?.value ?? input.options[0]?.value : input.defaultValue
      if (input.value !== drawn) drafts.set(input.id, input.value)
    }
    // The form a change was made from shows the record as it now is, unless the change was refused.
    if (said !== undefined && said.outcome.kind !== 'problem') {
      for (const input of byId(this.content, said.at)?.closest('form')?.querySelectorAll('input[id], select[id]') ?? []) drafts.delete(input.id)
    }
    replace(this.content, this.summary(), deliveryCard(this), itemsCard(this), scheduleCard(this), deliveriesCard(this), addressCard(this), this.history())
    for (const [id, value] of drafts) {
      const input = byId(this.content, id)
      if (typeof value === 'boolean') {
        if (input instanceof HTMLInputElement) input.checked = value
      } else if (input instanceof HTMLInputElement) input.value = value
      // A list redrawn without the drafted choice (the item just swapped in is no longer among its
      // own "swap for" options) keeps what it draws: setting it would leave the list blank.
      else if (input instanceof HTMLSelectElement && [...input.options].some((o) => o.value === value)) input.value = value
    }
    if (said !== undefined) {
      const slot = byId(this.content, `${said.at}-outcome`) ?? byId(this.content, `${said.card}-outcome`)
      if (slot) showOutcome(this.content, slot, said.outcome)
    }
  }

  /**
   * Runs one change: previewed as a dry run and confirmed first when it asks to be; then the page
   * shows the subscription as it now is and says what happened beside the control. A refusal
   * (422, 404…) reloads the record too: it may have changed elsewhere (another tab, the shop), and
   * the page must not go on showing what no longer is.
   */
  change(change: Change): void {
    void this.run(change)
  }

  private async run(change: Change): Promise<void> {
    if (this.busy) return
    this.busy = true
    this.content.setAttribute('aria-busy', 'true')
    clearOutcome(this.content)
    const before = this.sub
    let outcome: Outcome
    try {
      if (change.confirm !== undefined) {
        const preview = await change.send(this.portal.api.dryRun)
        if (preview === undefined || !(await confirmDialog(change.confirm(before, preview)))) return
      }
      await this.load(await change.send(this.portal.api))
      const same = JSON.stringify(this.sub) === JSON.stringify(before)
      const done = typeof change.done === 'function' ? change.done(this.sub) : change.done
      outcome = { kind: same ? 'nothing' : 'done', lines: [this.portal.t(same ? 'portal.nothing_changed' : done)], invalid: [] }
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && !(await this.portal.stillSignedIn())) return this.portal.sessionEnded()
      try {
        await this.load()
      } catch (gone) {
        return notShown(this.portal, gone)
      }
      outcome = problemOf(this.portal, err, change.fields)
    } finally {
      this.busy = false
      this.content.removeAttribute('aria-busy')
    }
    this.render({ at: change.at, card: change.card, outcome })
  }

  refuse(where: Pick<Change, 'at' | 'card' | 'fields'>, lines: readonly string[]): void {
    clearOutcome(this.content)
    const invalid = Object.values(where.fields ?? {}).map((f) => f.input)
    this.render({ at: where.at, card: where.card, outcome: { kind: 'problem', lines, invalid } })
  }

  /** The next page of older installments; the first of them gets the focus. */
  loadOlderInstallments(): void {
    void (async () => {
      try {
        const next = await this.readInstallments(this.installmentPages + 1, INSTALLMENTS_PAGE)
        this.installmentPages += 1
        this.installments = [...this.installments, ...next.installments.filter((i) => !this.installments.some((j) => j.id === i.id))]
        this.moreInstallments = next.current_page < next.pages
        this.render()
        const first = next.installments[0]
        byId(this.content, first === undefined ? 'deliveries-heading' : `delivery-${first.id}`)?.focus()
      } catch (err) {
        this.render({ at: 'older-deliveries', card: 'deliveries', outcome: problemOf(this.portal, err) })
      }
    })()
  }

  private summary(): HTMLElement {
    const { t } = this.portal
    const total = totalText(this.portal, this.sub)
    return h('section', { class: 'card', 'aria-labelledby': 'subscription-heading' },
      h('h1', { id: 'subscription-heading', tabindex: '-1' }, t('portal.subscription', { id: this.sub.id })),
      h('p', null, stateBadge(this.portal, this.sub)),
      h('dl', { class: 'facts' },
        h('dt', null, t('field.actionable_date')), h('dd', { id: 'next-delivery' }, nextDelivery(this.portal, this.sub)),
        h('dt', null, t('portal.frequency')), h('dd', null, frequency(this.portal, this.sub)),
        h('dt', null, t('portal.items')), h('dd', null, itemsSummary(this.portal, this.sub)),
        total === undefined ? null : [h('dt', null, t('portal.next_total')), h('dd', { id: 'next-total' }, total)]))
  }

  private history(): HTMLElement {
    const { t, page } = this.portal
    const label = (type: string): string => {
      const key = `event.${type}` as Key
      const text = t(key)
      return text === key ? type : text
    }
    return card('history', t('portal.history'), [
      this.events.length === 0
        ? h('p', null, t('portal.history_empty'))
        : h('ol', { class: 'timeline' }, this.events.map((e) =>
          h('li', null, h('time', { datetime: e.created_at }, formatDateTime(e.created_at, page.language)), h('span', null, label(e.type))))),
    ])
  }
}
