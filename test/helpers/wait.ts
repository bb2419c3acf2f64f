import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Waits for a condition rather than for a time: a test that sleeps "long enough" passes only on an
 * idle machine. Checks every 10 ms; fails after `ms` (a minute unless told: a hang, not a slow
 * machine), naming `what` it waited for.
 */
export async function until(what: string, condition: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(10)
  }
}
