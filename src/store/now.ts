let lastMs = Number.NaN
let lastIso = ''

/**
 * The current time as ISO 8601, the text every timestamp column holds on either backend.
 * Formatting a Date costs about a microsecond and a write asks up to three times (row, parent's
 * updated_at, event); the text only changes each millisecond, so it is kept for that
 * millisecond: exactly what a fresh call would answer.
 */
export function nowIso(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}
