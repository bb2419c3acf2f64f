/** Bytes of rendered bodies a store keeps unless told otherwise (REPLENISH_READ_CACHE_MB's default). */
export const DEFAULT_READ_CACHE_BYTES = 16 * 1024 * 1024

/** A map of at most `budget` bytes of values (as `sizeOf` counts them), oldest out first. */
export class Budgeted<V> {
  private readonly map = new Map<number, V>()
  private bytes = 0
  private readonly budget: number
  private readonly sizeOf: (value: V) => number

  constructor(budget: number, sizeOf: (value: V) => number) {
    this.budget = budget
    this.sizeOf = sizeOf
  }

  get(id: number): V | undefined {
    return this.map.get(id)
  }

  get size(): number {
    return this.map.size
  }

  /** A value larger than the whole budget is not kept (nor is anything with a budget of 0). */
  set(id: number, value: V): void {
    const size = this.sizeOf(value)
    if (this.budget <= 0 || size > this.budget) return
    this.delete(id)
    this.map.set(id, value)
    this.bytes += size
    for (const [oldest, entry] of this.map) {
      if (this.bytes <= this.budget) break
      this.map.delete(oldest)
      this.bytes -= this.sizeOf(entry)
    }
  }

  delete(id: number): void {
    const entry = this.map.get(id)
    if (entry === undefined) return
    this.map.delete(id)
    this.bytes -= this.sizeOf(entry)
  }

  clear(): void {
    this.map.clear()
    this.bytes = 0
  }
}
