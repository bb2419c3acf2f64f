/**
 * `npm run lint:openapi`: the document, written to a temporary file, through `redocly lint
 * --extends recommended`. Redocly exits 0 on warnings; we hold the document to none, so this
 * fails on a warning too. A dev tool: nothing in the service imports it (esbuild never bundles it).
 * Offline: telemetry and the update check are off.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openApiDocument } from './document.ts'

export interface LintResult {
  readonly ok: boolean
  readonly errors: number
  readonly warnings: number
  /** Redocly's own report, as it printed it. */
  readonly output: string
}

export function lintDocument(): LintResult {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-openapi-'))
  const file = join(dir, 'openapi.json')
  try {
    writeFileSync(file, JSON.stringify(openApiDocument, null, 2))
    const cli = fileURLToPath(new URL('../../../node_modules/@redocly/cli/bin/cli.js', import.meta.url))
    const run = spawnSync(process.execPath, [cli, 'lint', '--extends', 'recommended', '--format', 'stylish', '--max-problems', '1000', file], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 60_000,
    })
    const output = `${run.stdout}${run.stderr}`
    const errors = Number(/failed with (\d+) error/.exec(output)?.[1] ?? (run.status === 0 ? 0 : 1))
    const warnings = Number(/(\d+) warnings?\b/.exec(output)?.[1] ?? 0)
    return { ok: run.status === 0 && errors === 0 && warnings === 0, errors, warnings, output }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = lintDocument()
  process.stdout.write(result.output)
  if (!result.ok) {
    process.stderr.write(`lint:openapi: ${result.errors} error(s), ${result.warnings} warning(s); the document must have none.\n`)
    process.exitCode = 1
  }
}
