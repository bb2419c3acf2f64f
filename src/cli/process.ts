import type { Config } from '../config.ts'

/** `replenish process`: filled in by the processing issue. */
export async function processCommand(_config: Config, _asOf: string | undefined, io: { out: (l: string) => void; err: (l: string) => void }): Promise<number> {
  io.err('replenish: process is not available yet')
  return 1
}
