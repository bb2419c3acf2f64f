import { field, h } from '../lib/dom.ts'
import { itemName, linePrice } from './describe.ts'
import { slot } from './feedback.ts'
import { asking } from './preview.ts'
import type { LineItem } from './portal.ts'
import { card, type SubscriptionView } from './view.ts'

/**
 * The "Items" card: each line with its price and total as the catalog says now (C16); change its
 * quantity, swap it for another product or remove it (both previewed by a dry run of the
 * subscription's update, which answers the new items and total); add a product, for every
 * delivery or for the next one only (C17's one-time line item, marked as such in the list).
 */
export function itemsCard(view: SubscriptionView): HTMLElement {
  const { t, session } = view.portal
  const choices = session.catalogue.filter((c) => c.subscribable)
  const lines = view.sub.line_items.map((li) => line(view, li))
  return card('items', t('portal.items'), [
    lines.length === 0 ? h('p', null, t('portal.no_items')) : h('ul', { class: 'items' }, lines),
    choices.length === 0 ? null : addForm(view, choices),
  ])
}

function line(view: SubscriptionView, li: LineItem): HTMLElement {
  const { t, api } = view.portal
  const name = itemName(view.portal, li.subscribable_id)
  const at = `item-${li.id}`
  const nested = (entry: Record<string, unknown>) => ({ subscription: { line_items_attributes: [{ id: li.id, ...entry }] } })

  const update = (e: Event): void => {
    e.preventDefault()
    const quantity = field(e.target as HTMLFormElement, 'quantity')
    view.change({
      at, card: 'items', done: 'portal.done.quantity',
      fields: { quantity: { input: `quantity-${li.id}` } },
      send: async () => {
        await api.patch(`/api/v1/line_items/${li.id}`, { subscription_line_item: { quantity } })
        return undefined
      },
    })
  }
  const swap = (e: Event): void => {
    e.preventDefault()
    const other = field(e.target as HTMLFormElement, 'subscribable_id')
    view.change({
      at, card: 'items', done: 'portal.done.swap',
      fields: { 'line_items.subscribable': { input: `swap-${li.id}` } },
      confirm: asking(view.portal, t('portal.swap_title', { item: name, other: itemName(view.portal, Number(other)) }), t('portal.swap_confirm')),
      send: (writes) => writes.patch(view.path(), nested({ subscribable_id: other })),
    })
  }
  const remove = (): void => view.change({
    at, card: 'items', done: 'portal.done.remove',
    confirm: asking(view.portal, t('portal.remove_title', { item: name }), t('portal.remove_confirm'), true),
    send: (writes) => writes.patch(view.path(), nested({ _destroy: true })),
  })
  const others = view.portal.session.catalogue.filter((c) => c.subscribable && c.id !== li.subscribable_id)
  const price = linePrice(view.portal, li, view.sub.currency)
  return h('li', { class: 'item' },
    h('p', { class: 'item-head' }, h('span', { class: 'item-name' }, name),
      li.one_time ? h('span', { class: 'badge planned' }, t('portal.field.one_time')) : null,
      price === undefined ? null : h('span', { class: 'price' }, price)),
    h('form', { class: 'row', novalidate: true, onsubmit: update },
      h('div', null,
        h('label', { for: `quantity-${li.id}`, class: 'visually-hidden' }, t('portal.quantity_of', { item: name })),
        h('input', { id: `quantity-${li.id}`, name: 'quantity', type: 'number', inputmode: 'numeric', value: li.quantity })),
      h('button', { type: 'submit', id: `update-${li.id}`, class: 'secondary', 'aria-label': t('portal.update_quantity', { item: name }) }, t('portal.update')),
      h('button', { type: 'button', id: `remove-${li.id}`, class: 'link', 'aria-label': t('portal.remove_item', { item: name }), onclick: remove }, t('portal.remove'))),
    others.length === 0 ? null : h('form', { class: 'row', novalidate: true, onsubmit: swap },
      h('div', null,
        h('label', { for: `swap-${li.id}` }, t('portal.swap_for', { item: name })),
        h('select', { id: `swap-${li.id}`, name: 'subscribable_id' }, others.map((c) => h('option', { value: c.id }, c.name)))),
      h('button', { type: 'submit', id: `swap-button-${li.id}`, class: 'secondary', 'aria-label': t('portal.swap_item', { item: name }) }, t('portal.swap'))),
    slot(at))
}

function addForm(view: SubscriptionView, choices: readonly { id: number; name: string }[]): HTMLElement {
  const { t, api } = view.portal
  const submit = (e: Event): void => {
    e.preventDefault()
    const form = e.target as HTMLFormElement
    const oneTime = (form.elements.namedItem('one_time') as HTMLInputElement).checked
    const item = { subscribable_id: field(form, 'item'), quantity: field(form, 'quantity'), ...(oneTime ? { one_time: true } : {}) }
    view.change({
      at: 'add', card: 'items', done: oneTime ? 'portal.done.add_once' : 'portal.done.add',
      fields: {
        quantity: { input: 'add-quantity' },
        subscribable: { input: 'add-item' },
        one_time: { input: 'add-one-time' },
      },
      send: async () => {
        await api.post(view.path('/line_items'), { subscription_line_item: item })
        return undefined
      },
    })
  }
  return h('div', null,
    h('form', { class: 'row', novalidate: true, onsubmit: submit },
      h('div', null, h('label', { for: 'add-item' }, t('portal.add_item')),
        h('select', { id: 'add-item', name: 'item' }, choices.map((c) => h('option', { value: c.id }, c.name)))),
      h('div', null, h('label', { for: 'add-quantity' }, t('field.quantity')), h('input', { id: 'add-quantity', name: 'quantity', type: 'number', inputmode: 'numeric', value: 1 })),
      h('p', { class: 'check' },
        h('input', { id: 'add-one-time', name: 'one_time', type: 'checkbox' }),
        h('label', { for: 'add-one-time' }, t('portal.add_once'))),
      h('button', { type: 'submit', id: 'add', class: 'secondary' }, t('portal.add'))),
    slot('add'))
}
