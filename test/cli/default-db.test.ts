import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { SCHEMA_VERSION } from '../../src/store/sqlite/migrations.ts'
import { spawnCli, tempDir } from './harness.ts'

test('serve with no REPLENISH_DB creates data/replenish.db (and data/) in the working directory and migrates it', async (t) => {
  const cwd = tempDir(t)
  assert.equal(existsSync(join(cwd, 'data')), false)
  const child = spawnCli(t, ['serve', '--port', '0'], { cwd, env: { REPLENISH_PROCESS_EVERY: '0' } })
  const url = (await child.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string
  assert.equal((await fetch(`${url}/readyz`)).status, 200)
  child.kill('SIGTERM')
  assert.deepEqual(await child.exited, { code: 0, signal: null })
  const raw = new DatabaseSync(join(cwd, 'data', 'replenish.db'), { readOnly: true })
  assert.equal((raw.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, SCHEMA_VERSION)
  raw.close()
})
