import { ApiError } from '../lib/api.ts'
import { confirmDialog } from '../lib/dialog.ts'
import { field, h, replace, type Child } from '../lib/dom.ts'
import { addDays, formatDateTime } from '../lib/format.ts'
import { frequency, itemName, itemsSummary, nextDelivery, stateBadge } from './describe.ts'
import type { EventItem, Key, Portal, Subscription } from './portal.ts'

const ADDRESS_FIELDS = {
  firstname: 'given-name', lastname: 'family-name', company: 'organization', address1: 'address-line1', address2: 'address-line2',
  city: 'address-level2', zipcode: 'postal-code', state_name: 'address-level1', country_iso: 'country', phone: 'tel',
} as const
const UNITS = ['day', 'week', 'month', 'year'] as const

/**
 * `#/subscriptions/:id`: one subscription and everything the customer may do with it. Every
 * change is a call to the customer API, whose answer (or 422 messages, in the page's language)
 * is shown as it comes: the rules live there, not here. A subscription the API does not show
 * (another customer's: 401; none: 404) shows nothing but that it cannot be shown.
 */
export async function showSubscription(portal: Portal, id: string): Promise<void> {
  const { t, page } = portal
  replace(page.main, h('p', { class: 'loading', role: 'status' }, t('common.loading')))
  let view: DetailView
  try {
    view = new DetailView(portal, await portal.api.get<Subscription>(`/api/v1/subscriptions/${encodeURIComponent(id)}`))
    await view.loadEvents()
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && !(await portal.stillSignedIn())) return portal.sessionEnded()
    const heading = h('h1', { tabindex: '-1' }, t('portal.not_found'))
    replace(page.main, backLink(portal), heading,
      err instanceof ApiError && (err.status === 401 || err.status === 404) ? null : h('p', { class: 'problem', role: 'alert' }, messageOf(portal, err)))
    heading.focus()
    return
  }
  view.mount()
}

function backLink(portal: Portal): HTMLElement {
  return h('p', null, h('a', { href: '#/' }, `← ${portal.t('portal.back_to_list')}`))
}

function messageOf(portal: Portal, err: unknown): string {
  return err instanceof ApiError ? err.message : portal.t('common.error')
}

class DetailView {
  private readonly portal: Portal
  private sub: Subscription
  private events: readonly EventItem[] = []
  private readonly notice = h('div', { class: 'notice', role: 'status' })
  private readonly problem = h('div', { class: 'problem', role: 'alert' })
  private readonly content = h('div')
  private busy = false

  constructor(portal: Portal, sub: Subscription) {
    this.portal = portal
    this.sub = sub
  }

  async loadEvents(): Promise<void> {
    const page = await this.portal.api.get<{ events: EventItem[] }>(`/api/v1/subscriptions/${this.sub.id}/events?per_page=50`)
    this.events = page.events
  }

  mount(): void {
    replace(this.portal.page.main, backLink(this.portal), this.notice, this.problem, this.content)
    this.render()
    document.getElementById('subscription-heading')?.focus()
  }

  /** Redraws from `this.sub`; the control that had the focus gets it back (ids are stable). */
  private render(): void {
    const focused = document.activeElement?.id
    replace(this.content, this.summary(), this.delivery(), this.items(), this.schedule(), this.address(), this.history())
    if (focused) (document.getElementById(focused) ?? document.getElementById('subscription-heading'))?.focus()
  }

  /** Runs one change; on success shows the subscription as it is now and says what happened. */
  private async act(done: Key | ((sub: Subscription) => Key), change: () => Promise<Subscription | undefined>): Promise<void> {
    if (this.busy) return
    this.busy = true
    this.content.setAttribute('aria-busy', 'true')
    this.notice.textContent = ''
    replace(this.problem)
    try {
      const changed = await change()
      this.sub = changed ?? (await this.portal.api.get<Subscription>(`/api/v1/subscriptions/${this.sub.id}`))
      await this.loadEvents()
      this.render()
      this.notice.textContent = this.portal.t(typeof done === 'function' ? done(this.sub) : done)
    } catch (err) {
      await this.showProblem(err)
    } finally {
      this.busy = false
      this.content.removeAttribute('aria-busy')
    }
  }

  private async showProblem(err: unknown): Promise<void> {
    const { t } = this.portal
    if (err instanceof ApiError && err.status === 401 && !(await this.portal.stillSignedIn())) return this.portal.sessionEnded()
    if (err instanceof ApiError && err.fields !== undefined) {
      const label = (name: string): string => {
        const key = `field.${name.slice(name.lastIndexOf('.') + 1)}` as Key
        const text = t(key)
        return text === key ? name : text
      }
      replace(this.problem, t('portal.fix_errors'), h('ul', null, Object.entries(err.fields).map(([name, messages]) => h('li', null, `${label(name)}: ${messages.join(', ')}`))))
      return
    }
    replace(this.problem, messageOf(this.portal, err))
  }

  private path(suffix = ''): string {
    return `/api/v1/subscriptions/${this.sub.id}${suffix}`
  }

  private summary(): HTMLElement {
    const { t } = this.portal
    return h('section', { class: 'card', 'aria-labelledby': 'subscription-heading' },
      h('h1', { id: 'subscription-heading', tabindex: '-1' }, t('portal.subscription', { id: this.sub.id })),
      h('p', null, stateBadge(this.portal, this.sub)),
      h('dl', { class: 'facts' },
        h('dt', null, t('field.actionable_date')), h('dd', { id: 'next-delivery' }, nextDelivery(this.portal, this.sub)),
        h('dt', null, t('portal.frequency')), h('dd', null, frequency(this.portal, this.sub)),
        h('dt', null, t('portal.items')), h('dd', null, itemsSummary(this.portal, this.sub))))
  }

  private delivery(): HTMLElement {
    const { t, api, session } = this.portal
    const sub = this.sub
    const ended = sub.state === 'canceled' || sub.state === 'inactive'
    const parts: Child[] = []
    if (!ended && !sub.paused) {
      parts.push(h('p', null, h('button', { type: 'button', id: 'skip', onclick: () => this.act('portal.done.skip', () => api.post(this.path('/skip'))) }, t('portal.skip'))))
    }
    if (sub.state === 'active' && !sub.paused) {
      const pause = (e: Event): void => {
        e.preventDefault()
        const date = field(e.target as HTMLFormElement, 'date')
        void this.act('portal.done.pause', () => api.post(this.path('/pause'), date === '' ? {} : { subscription: { actionable_date: date } }))
      }
      parts.push(h('form', { class: 'row', novalidate: true, onsubmit: pause },
        h('div', null, h('label', { for: 'pause-date' }, t('portal.pause_until')), h('input', { id: 'pause-date', name: 'date', type: 'date', min: addDays(session.today, 1) })),
        h('button', { type: 'submit', id: 'pause', class: 'secondary' }, t('portal.pause'))))
    }
    if (sub.paused) {
      parts.push(h('p', null, h('button', { type: 'button', id: 'resume', onclick: () => this.act('portal.done.resume', () => api.post(this.path('/resume'))) }, t('portal.resume'))))
    }
    if (!ended) parts.push(h('p', null, h('button', { type: 'button', id: 'cancel', class: 'secondary', onclick: () => this.cancel() }, t('portal.cancel'))))
    if (parts.length === 0) return h('span')
    return section('delivery', t('portal.actions'), parts)
  }

  private async cancel(): Promise<void> {
    const { t, api } = this.portal
    const yes = await confirmDialog({ title: t('portal.cancel_title'), body: t('portal.cancel_body'), confirm: t('portal.cancel_confirm'), dismiss: t('portal.cancel_keep'), danger: true })
    if (!yes) return
    await this.act((sub) => (sub.state === 'pending_cancellation' ? 'portal.done.cancellation_pending' : 'portal.done.cancel'), () => api.post(this.path('/cancel')))
  }

  private items(): HTMLElement {
    const { t, api, session } = this.portal
    const rows = this.sub.line_items.map((li) => {
      const name = itemName(this.portal, li.subscribable_id)
      const update = (e: Event): void => {
        e.preventDefault()
        const quantity = field(e.target as HTMLFormElement, 'quantity')
        void this.act('portal.done.quantity', async () => {
          await api.patch(`/api/v1/line_items/${li.id}`, { subscription_line_item: { quantity } })
          return undefined
        })
      }
      const remove = async (): Promise<void> => {
        const yes = await confirmDialog({ title: t('portal.remove_title', { item: name }), confirm: t('portal.remove_confirm'), dismiss: t('common.close'), danger: true })
        if (yes) {
          await this.act('portal.done.remove', async () => {
            await api.del(`/api/v1/line_items/${li.id}`)
            return undefined
          })
        }
      }
      return h('li', { class: 'item' },
        h('span', { class: 'item-name' }, name),
        h('form', { class: 'row', novalidate: true, onsubmit: update },
          h('div', null,
            h('label', { for: `quantity-${li.id}`, class: 'visually-hidden' }, t('portal.quantity_of', { item: name })),
            h('input', { id: `quantity-${li.id}`, name: 'quantity', type: 'number', inputmode: 'numeric', value: li.quantity })),
          h('button', { type: 'submit', id: `update-${li.id}`, class: 'secondary', 'aria-label': t('portal.update_quantity', { item: name }) }, t('portal.update')),
          h('button', { type: 'button', id: `remove-${li.id}`, class: 'link', 'aria-label': t('portal.remove_item', { item: name }), onclick: remove }, t('portal.remove'))))
    })
    const choices = session.catalogue.filter((c) => c.subscribable)
    const add = (e: Event): void => {
      e.preventDefault()
      const form = e.target as HTMLFormElement
      const item = { subscribable_id: field(form, 'item'), quantity: field(form, 'quantity') }
      void this.act('portal.done.add', async () => {
        await api.post(this.path('/line_items'), { subscription_line_item: item })
        return undefined
      })
    }
    return section('items', t('portal.items'), [
      rows.length === 0 ? h('p', null, t('portal.no_items')) : h('ul', { class: 'items' }, rows),
      choices.length === 0 ? null : h('form', { class: 'row', novalidate: true, onsubmit: add },
        h('div', null, h('label', { for: 'add-item' }, t('portal.add_item')),
          h('select', { id: 'add-item', name: 'item' }, choices.map((c) => h('option', { value: c.id }, c.name)))),
        h('div', null, h('label', { for: 'add-quantity' }, t('field.quantity')), h('input', { id: 'add-quantity', name: 'quantity', type: 'number', inputmode: 'numeric', value: 1 })),
        h('button', { type: 'submit', id: 'add', class: 'secondary' }, t('portal.add'))),
    ])
  }

  private schedule(): HTMLElement {
    const { t, api } = this.portal
    const sub = this.sub
    const saveFrequency = (e: Event): void => {
      e.preventDefault()
      const form = e.target as HTMLFormElement
      const change = { interval_length: field(form, 'interval_length'), interval_units: field(form, 'interval_units') }
      void this.act('portal.done.frequency', () => api.patch(this.path(), { subscription: change }))
    }
    const saveDate = (e: Event): void => {
      e.preventDefault()
      const date = field(e.target as HTMLFormElement, 'actionable_date')
      void this.act('portal.done.next_date', () => api.patch(this.path(), { subscription: { actionable_date: date } }))
    }
    return section('schedule', t('portal.schedule'), [
      h('form', { class: 'row', novalidate: true, onsubmit: saveFrequency },
        h('div', null, h('label', { for: 'interval-length' }, t('field.interval_length')),
          h('input', { id: 'interval-length', name: 'interval_length', type: 'number', inputmode: 'numeric', value: sub.interval_length })),
        h('div', null, h('label', { for: 'interval-units' }, t('field.interval_units')),
          h('select', { id: 'interval-units', name: 'interval_units' }, UNITS.map((u) => h('option', { value: u, selected: u === sub.interval_units }, t(`unit.${u}`))))),
        h('button', { type: 'submit', id: 'save-frequency', class: 'secondary' }, t('portal.save_frequency'))),
      h('form', { class: 'row', novalidate: true, onsubmit: saveDate },
        h('div', null, h('label', { for: 'next-date' }, t('field.actionable_date')),
          h('input', { id: 'next-date', name: 'actionable_date', type: 'date', value: sub.actionable_date ?? '' })),
        h('button', { type: 'submit', id: 'save-next-date', class: 'secondary' }, t('portal.save_next_date'))),
    ])
  }

  private address(): HTMLElement {
    const { t, api } = this.portal
    const current = this.sub.shipping_address ?? {}
    const save = (e: Event): void => {
      e.preventDefault()
      const form = e.target as HTMLFormElement
      const attrs: Record<string, string | null> = {}
      for (const name of Object.keys(ADDRESS_FIELDS)) attrs[name] = field(form, name) || null
      void this.act('portal.done.address', () => api.patch(this.path(), { subscription: { shipping_address_attributes: attrs } }))
    }
    const inputs = Object.entries(ADDRESS_FIELDS).map(([name, autocomplete]) =>
      h('div', null,
        h('label', { for: `address-${name}` }, t(`field.${name}` as Key)),
        h('input', { id: `address-${name}`, name, type: name === 'phone' ? 'tel' : 'text', autocomplete: `shipping ${autocomplete}`, value: current[name] ?? '' })))
    return section('address', t('portal.shipping_address'), [
      h('form', { novalidate: true, onsubmit: save }, h('div', { class: 'fields' }, inputs),
        h('button', { type: 'submit', id: 'save-address', class: 'secondary' }, t('portal.save_address'))),
    ])
  }

  private history(): HTMLElement {
    const { t, page } = this.portal
    const label = (type: string): string => {
      const key = `event.${type}` as Key
      const text = t(key)
      return text === key ? type : text
    }
    return section('history', t('portal.history'), [
      this.events.length === 0
        ? h('p', null, t('portal.history_empty'))
        : h('ol', { class: 'timeline' }, this.events.map((e) =>
          h('li', null, h('time', { datetime: e.created_at }, formatDateTime(e.created_at, page.language)), h('span', null, label(e.type))))),
    ])
  }
}

function section(id: string, title: string, children: Child[]): HTMLElement {
  return h('section', { class: 'card', 'aria-labelledby': `${id}-heading` }, h('h2', { id: `${id}-heading` }, title), children)
}
