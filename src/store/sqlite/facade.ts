import type { Writer } from './writer.ts'

/** A repository of synchronous methods, as the SQLite stores are. */
type SyncRepo = Record<string, (...args: never[]) => unknown>

/** The same methods answering promises: the shape of the store's interface (api.ts). */
export type Async<R> = { readonly [K in keyof R]: R[K] extends (...args: infer A) => infer T ? (...args: A) => Promise<T> : never }

/**
 * The repository as a unit sees it (`tx`): each call runs at once on the connection, inside the
 * running unit's savepoint, and answers a settled promise, so a unit that awaits only the store
 * runs to its end within one turn of the event loop (writer.ts). Outside its unit (after it, or
 * from other code while a unit runs) a call is a bug: it would land in whichever unit runs then,
 * so it rejects.
 */
export function unitFacade<R extends object>(repo: R, writer: Writer): Async<R> {
  return wrap(repo, (method, args) => {
    if (!writer.inUnit) return Promise.reject(new Error('a unit\'s tx was used outside its unit of writes'))
    try {
      return Promise.resolve(method.apply(repo, args))
    } catch (err) {
      return Promise.reject(err)
    }
  })
}

/**
 * The repository as the store's reads: the read barrier. While a unit is running (between two of
 * its awaits) a read waits for it to settle, so it never sees a unit's writes that may yet be
 * rolled back to its savepoint; otherwise it runs at once. Only the interface's read methods are
 * typed on the store (api.ts `Reads`), so a write outside a unit does not compile.
 */
export function readFacade<R extends object>(repo: R, writer: Writer): Async<R> {
  const run = (method: (...args: unknown[]) => unknown, args: unknown[]): Promise<unknown> => {
    if (writer.busy) return writer.settled().then(() => run(method, args))
    try {
      return Promise.resolve(method.apply(repo, args))
    } catch (err) {
      return Promise.reject(err)
    }
  }
  return wrap(repo, run)
}

function wrap<R extends object>(repo: R, call: (method: (...args: unknown[]) => unknown, args: unknown[]) => Promise<unknown>): Async<R> {
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {}
  for (const [name, value] of Object.entries(repo as SyncRepo)) {
    if (typeof value !== 'function') continue
    const method = value as (...args: unknown[]) => unknown
    out[name] = (...args) => call(method, args)
  }
  return Object.freeze(out) as unknown as Async<R>
}
