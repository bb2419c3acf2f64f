/**
 * Issue 15 items 3 and 4 against the built executable, in the conditions that need more than a
 * test process: a user that is not root (0444 does not stop root), a real full disk (a tiny
 * tmpfs, mounted in a private mount namespace), and a write lock held by another process for
 * longer than the 5 s busy timeout. A transient condition exits 1 (systemd restarts it); a
 * database that cannot be used exits 3 (RestartPreventExitStatus=2 3).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import type { TestContext } from 'node:test'
import { SCHEMA_VERSION } from '../src/store/sqlite/migrations.ts'
import { spawnProcess, tempDir } from '../test/cli/harness.ts'

const BINARY = fileURLToPath(new URL('../dist/replenish', import.meta.url))
if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`)

const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin'
const NOBODY = 65534
const isRoot = process.getuid?.() === 0

async function run(t: TestContext, command: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnProcess(t, command, args, { env: { PATH: SYSTEM_PATH, ...env } })
  // A server that starts anyway fails the test instead of hanging it.
  const listening = child.waitFor(/^replenish listening on \S+$/m).then(() => true, () => false)
  if (await Promise.race([child.exited.then(() => false), listening])) {
    child.kill('SIGKILL')
    assert.fail(`${args.join(' ')} started: ${child.stdout()}`)
  }
  const { code } = await child.exited
  return { code, stdout: child.stdout(), stderr: child.stderr() }
}

/** The binary as a user that is not root: 0444 binds it. */
const asUser = (args: string[]): [string, string[]] =>
  isRoot ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', BINARY, ...args]] : [BINARY, args]

test('serve on a database file it cannot write (0444, not root) exits 3 naming the file; backup still copies it', async (t) => {
  const dir = tempDir(t)
  const db = join(dir, 'r.db')
  assert.equal((await run(t, BINARY, ['migrate', '--db', db])).code, 0)
  chmodSync(db, 0o444)
  chmodSync(dir, 0o777)
  assert.deepEqual(await run(t, ...asUser(['serve', '--db', db, '--port', '0'])), {
    code: 3,
    stdout: '',
    stderr: `replenish: cannot use the database ${db}: permission denied: it is read-only for this user (mode 0444, owner uid ${statSync(db).uid}) (SQLite: attempt to write a readonly database)\n`,
  })
  const copy = join(dir, 'copy.db')
  assert.deepEqual(await run(t, ...asUser(['backup', copy, '--db', db])), { code: 0, stdout: `backup of ${db} written to ${copy}\n`, stderr: '' })
})

test('a write lock held by another process past the busy timeout exits 1 (try again), naming the file', async (t) => {
  const dir = tempDir(t)
  const db = join(dir, 'r.db')
  assert.equal((await run(t, BINARY, ['migrate', '--db', db])).code, 0)
  const holder = new DatabaseSync(db)
  t.after(() => holder.close())
  holder.exec('BEGIN IMMEDIATE')
  assert.deepEqual(await run(t, BINARY, ['serve', '--db', db, '--port', '0']), {
    code: 1,
    stdout: '',
    stderr: `replenish: cannot use the database ${db}: another process holds its write lock (waited 5000 ms) (SQLite: database is locked)\n`,
  })
})

test('a full disk at start exits 1 (systemd restarts it), and once space is freed the same command works; a backup to a full disk exits 1 and leaves nothing', async (t) => {
  const dir = tempDir(t)
  // Inside a private mount namespace (a user namespace too when not root), so the tmpfs is seen
  // by this script alone and goes away with it.
  const script = `
    set -u
    mount -t tmpfs -o size=2m tmpfs "$1" || exit 90
    "$2" migrate --db "$1/r.db" >/dev/null || exit 91
    dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
    timeout -s KILL 20 "$2" serve --db "$1/r.db" --port 0
    echo "full: $?"
    mkdir "$1/small" && mount -t tmpfs -o size=16k tmpfs "$1/small" || exit 92
    rm "$1/fill"
    "$2" backup --db "$1/r.db" "$1/small/copy.db"
    echo "backup to a full disk: $? $(ls "$1/small")"
    dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
    rm "$1/fill"
    "$2" migrate --db "$1/r.db"
    echo "freed: $?"
  `
  const unshare = isRoot ? ['-m'] : ['-r', '-m']
  const result = await run(t, 'unshare', [...unshare, 'sh', '-c', script, 'sh', dir, BINARY])
  const db = join(dir, 'r.db')
  assert.deepEqual(result, {
    code: 0,
    stdout: `full: 1\nbackup to a full disk: 1 \ndatabase ${db} is at schema version ${SCHEMA_VERSION}\nfreed: 0\n`,
    stderr:
      `replenish: cannot use the database ${db}: the disk is full (SQLite: disk I/O error)\n` +
      `replenish: cannot write the backup ${join(dir, 'small', 'copy.db')}: database or disk is full\n`,
  })
})

test('a file that is not a database exits 3 naming the file', async (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'notes.txt')
  writeFileSync(file, 'not a database\n'.repeat(300))
  assert.deepEqual(await run(t, BINARY, ['serve', '--db', file, '--port', '0']), {
    code: 3,
    stdout: '',
    stderr: `replenish: cannot use the database ${file}: it is not a SQLite database (SQLite: file is not a database)\n`,
  })
})
