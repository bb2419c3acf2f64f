/** The catalog (items, prices, discounts) and the payment methods and sources: the repository's records and interfaces, exported by ../api.ts. */
import type { PaymentMethod, PaymentSource, Subscribable, SubscribableFields } from '../../domain/types.ts'

export type PaymentSourceFields = Omit<PaymentSource, 'id' | 'created_at' | 'updated_at'>

/** A question validation asks of the catalog (src/domain's Lookups), answered by `CatalogReads.answer`. */
export type CatalogQuestion =
  | { readonly kind: 'payment'; readonly method: number; readonly source: number; readonly user: number }
  | { readonly kind: 'item'; readonly id: number }

export interface CatalogReads {
  /** Every question at once, answers in the same order: one call (one round trip) per validation. */
  answer(questions: readonly CatalogQuestion[]): Promise<boolean[]>
  findPaymentMethod(id: number): Promise<PaymentMethod | undefined>
  listPaymentMethods(after: number, limit: number): Promise<PaymentMethod[]>
  findPaymentSource(id: number): Promise<PaymentSource | undefined>
  listPaymentSources(userId: number | undefined, after: number, limit: number): Promise<PaymentSource[]>
  /** C6: the method exists and is active; the source exists, is the user's and the method's. */
  paymentIsValid(methodId: number, sourceId: number, userId: number): Promise<boolean>
  findSubscribable(id: number): Promise<Subscribable | undefined>
  subscribableIdForSku(sku: string): Promise<number | undefined>
  listSubscribables(after: number, limit: number): Promise<Subscribable[]>
  isSubscribable(id: number): Promise<boolean>
}

export interface CatalogTx extends CatalogReads {
  createPaymentMethod(name: string, active: boolean): Promise<PaymentMethod>
  updatePaymentMethod(id: number, name: string, active: boolean): Promise<PaymentMethod>
  createPaymentSource(f: PaymentSourceFields): Promise<PaymentSource>
  deletePaymentSource(id: number): Promise<void>
  /** A new catalog item with its prices (C16); the null ones are left out. */
  createSubscribable(f: SubscribableFields): Promise<Subscribable>
  /** Writes every field; prices merge by currency into the item's, null removing one (C16). */
  updateSubscribable(id: number, f: SubscribableFields): Promise<Subscribable>
  deleteSubscribable(id: number): Promise<void>
}
