import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/**
 * How a bench runs replenish: `dist/replenish` when it is built and newer than every source file
 * (a stale build would time old code), else the sources through tsx. Answers [command, prefix
 * arguments] and which of the two it is, for the log.
 */
export function replenishCommand(root) {
  const binary = join(root, 'dist', 'replenish')
  return builtAndFresh(binary, join(root, 'src'))
    ? { command: binary, prefix: [], label: binary }
    : { command: process.execPath, prefix: ['--import', 'tsx', join(root, 'src', 'main.ts')], label: 'src/main.ts through tsx' }
}

function builtAndFresh(file, sources) {
  if (!existsSync(file)) return false
  const built = statSync(file).mtimeMs
  const newest = (d) => Math.max(0, ...readdirSync(d, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(d, e.name)) : statSync(join(d, e.name)).mtimeMs)))
  return built > newest(sources)
}
