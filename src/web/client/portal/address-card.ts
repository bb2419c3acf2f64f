import { field, h } from '../lib/dom.ts'
import type { FormFields } from './feedback.ts'
import { slot } from './feedback.ts'
import type { Key } from './portal.ts'
import { card, type SubscriptionView } from './view.ts'

const ADDRESS_FIELDS = {
  firstname: 'given-name', lastname: 'family-name', company: 'organization', address1: 'address-line1', address2: 'address-line2',
  city: 'address-level2', zipcode: 'postal-code', state_name: 'address-level1', country_iso: 'country', phone: 'tel',
} as const

/** The "Shipping address" card: every field of C3's address; a refused one is marked and named beside the form. */
export function addressCard(view: SubscriptionView): HTMLElement {
  const { t } = view.portal
  const current = view.sub.shipping_address ?? {}
  const fields: FormFields = Object.fromEntries(Object.keys(ADDRESS_FIELDS).map((name) => [`shipping_address.${name}`, { input: `address-${name}` }]))
  const save = (e: Event): void => {
    e.preventDefault()
    const form = e.target as HTMLFormElement
    const attrs: Record<string, string | null> = {}
    for (const name of Object.keys(ADDRESS_FIELDS)) attrs[name] = field(form, name) || null
    view.change({ at: 'save-address', card: 'address', fields, done: 'portal.done.address', send: (api) => api.patch(view.path(), { subscription: { shipping_address_attributes: attrs } }) })
  }
  const inputs = Object.entries(ADDRESS_FIELDS).map(([name, autocomplete]) =>
    h('div', null,
      h('label', { for: `address-${name}` }, t(`field.${name}` as Key)),
      h('input', { id: `address-${name}`, name, type: name === 'phone' ? 'tel' : 'text', autocomplete: `shipping ${autocomplete}`, value: current[name] ?? '' })))
  return card('address', t('portal.shipping_address'), [
    h('form', { novalidate: true, onsubmit: save }, h('div', { class: 'fields' }, inputs),
      h('button', { type: 'submit', id: 'save-address', class: 'secondary' }, t('portal.save_address'))),
    slot('save-address'),
  ])
}
