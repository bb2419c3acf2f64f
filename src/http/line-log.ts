/**
 * Buffered line output: one JSON line per request costs one write per event-loop turn instead
 * of one per request. `flush` runs before exit.
 */
export interface LineLog {
  write(entry: object): void
  flush(): void
}

export function bufferedLineLog(sink: (chunk: string) => void): LineLog {
  let pending: string[] = []
  let scheduled = false
  const flush = (): void => {
    scheduled = false
    if (pending.length === 0) return
    const chunk = pending.join('')
    pending = []
    sink(chunk)
  }
  return {
    write(entry) {
      pending.push(JSON.stringify(entry) + '\n')
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    flush,
  }
}
