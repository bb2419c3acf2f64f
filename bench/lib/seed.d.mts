/** Types of seed.mjs, for the TypeScript scripts of the bench (write-units.mts). */
export interface SeededUser {
  readonly key: string
  readonly subscriptions: number[]
  readonly lineItems: number[]
}
export const USERS: number
export const SUBSCRIPTIONS_PER_USER: number
export const LINE_ITEMS_PER_SUBSCRIPTION: number
export const SUBSCRIBABLES: number
export function seed(file: string, today: string): SeededUser[]
export function addMonth(date: string): string
