/**
 * `replenish import FILE` (C13, docs/import.md): the summary on stdout and status 0; the same file
 * again is all "already present" and changes no row; a refused line, an empty or unreadable file,
 * or no file at all is status 2 with one line naming the file (and the line), and writes nothing.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { migratedDb, runCli, tempDir } from '../cli/harness.ts'
import { snapshotAt } from '../helpers/rows.ts'
import { generateImport } from './generate.ts'

/** Every row of every table, to compare a database before and after. */
const rows = (db: string): Promise<string> => snapshotAt(db, { lastUsed: true })

test('import FILE prints what it did and exits 0; the same file again is all already present and changes nothing', async (t) => {
  const dir = tempDir(t)
  const env = { REPLENISH_DB: await migratedDb(t) }
  const file = join(dir, 'shop.jsonl')
  const g = generateImport(12)
  writeFileSync(file, '\uFEFF' + g.lines.join('\r\n') + '\r\n')
  const first = await runCli(['import', file], env)
  assert.deepEqual(first, {
    status: 0,
    stderr: [],
    stdout: [
      `imported ${file} into ${env.REPLENISH_DB}: ${g.lines.length} lines`,
      '  users                   3 inserted        0 already present',
      '  api_keys                3 inserted        0 already present',
      '  payment_methods         2 inserted        0 already present',
      '  payment_sources         3 inserted        0 already present',
      '  subscribables           3 inserted        0 already present',
      '  subscriptions          12 inserted        0 already present',
      `  line_items             ${g.counts['line_items']} inserted        0 already present`,
    ],
  })
  const once = await rows(env.REPLENISH_DB)
  const again = await runCli(['import', file], env)
  assert.equal(again.status, 0, again.stderr.join('\n'))
  assert.equal(again.stdout[6], '  subscriptions           0 inserted       12 already present')
  assert.equal(await rows(env.REPLENISH_DB), once)
})

test('a refused line is status 2 naming the file, the line and the field, and nothing is imported', async (t) => {
  const dir = tempDir(t)
  const env = { REPLENISH_DB: await migratedDb(t) }
  assert.equal((await runCli(['migrate'], env)).status, 0)
  const empty = await rows(env.REPLENISH_DB)
  const file = join(dir, 'shop.jsonl')
  const g = generateImport(12)
  const bad = { type: 'subscription', id: 7, user_id: 100, interval_length: 1, interval_units: 'fortnight', actionable_date: '2026-01-01' }
  writeFileSync(file, [...g.lines, JSON.stringify(bad)].join('\n'))
  assert.deepEqual(await runCli(['import', file], env), {
    status: 2,
    stdout: [],
    stderr: [`replenish: import: ${file}: line ${g.lines.length + 1} (subscription 7): interval_units is not included in the list; nothing was imported`],
  })
  assert.equal(await rows(env.REPLENISH_DB), empty)
})

test('no file, a file that cannot be read, a directory or an empty file: status 2, one line, nothing written', async (t) => {
  const dir = tempDir(t)
  const env = { REPLENISH_DB: await migratedDb(t) }
  const blank = join(dir, 'blank.jsonl')
  writeFileSync(blank, '\n\n   \n')
  mkdirSync(join(dir, 'folder'))
  const cases: [string[], string][] = [
    [['import'], 'replenish: import needs a file: replenish import FILE (JSON Lines, see docs/import.md)'],
    [['import', join(dir, 'missing.jsonl')], `replenish: import: cannot read ${join(dir, 'missing.jsonl')}: no such file`],
    [['import', join(dir, 'folder')], `replenish: import: cannot read ${join(dir, 'folder')}: it is a directory`],
    [['import', blank], `replenish: import: ${blank} has no lines to import; nothing was imported`],
    [['import', blank, 'extra'], 'replenish: unexpected argument "extra" for `replenish import`'],
  ]
  for (const [argv, line] of cases) assert.deepEqual(await runCli(argv, env), { status: 2, stdout: [], stderr: [line] }, argv.join(' '))
})
