/**
 * The kill -9 drill (drills/kill9.mjs, `npm run drills`) is not part of `npm test`; two short
 * rounds here keep the script itself working against the built executable.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { spawnProcess } from '../test/cli/harness.ts'

const DRILL = fileURLToPath(new URL('../drills/kill9.mjs', import.meta.url))

test('the kill -9 drill runs two rounds against dist/replenish and loses nothing', async (t) => {
  const child = spawnProcess(t, process.execPath, [DRILL, '--rounds', '2', '--clients', '4', '--kill-after', '200-600', '--duration', '60'])
  const { code } = await child.exited
  assert.equal(code, 0, child.stderr())
  assert.match(child.stdout(), /^kill -9 drill: 2 rounds, [1-9]\d* acknowledged writes .* 0 lost, 0 rows holding what was never sent, integrity_check ok, 0 unexpected answers\n$/)
})
