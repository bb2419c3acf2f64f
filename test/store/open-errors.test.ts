/**
 * Issue 15 items 3 and 4: every way opening the database fails names the file and the cause, and
 * says whether it may work later (a lock held elsewhere, a full disk: transient, exit 1) or not
 * (not a database, corrupt, read-only: exit 3). The CLI side is test/cli/startup-checks.test.ts;
 * a real full disk and a real non-root user are in test-binary/startup-checks.test.ts.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { DatabaseDirectoryMissing, DatabaseOpenError, isTransientSqliteError, openDatabase, type OpenOptions } from '../../src/store/sqlite/db.ts'

const OPTIONS: OpenOptions = { synchronous: 'FULL', createDirectory: false }

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-open-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** What openDatabase threw, which must be one of ours. */
function openFailure(file: string, options: Partial<OpenOptions> = {}): DatabaseOpenError | DatabaseDirectoryMissing {
  try {
    openDatabase(file, { ...OPTIONS, ...options }).close()
  } catch (err) {
    if (err instanceof DatabaseOpenError || err instanceof DatabaseDirectoryMissing) return err
    throw err
  }
  assert.fail(`${file} opened`)
}

function migrated(dir: string): string {
  const file = join(dir, 'r.db')
  openDatabase(file, OPTIONS).close()
  return file
}

test('a text file is not a database: unusable, and the message names the file', (t) => {
  const file = join(tempDir(t), 'notes.txt')
  writeFileSync(file, 'these are not the pages you are looking for\n'.repeat(200))
  const err = openFailure(file)
  assert.ok(err instanceof DatabaseOpenError)
  assert.equal(err.transient, false)
  assert.equal(err.message, `cannot use the database ${file}: it is not a SQLite database (SQLite: file is not a database)`)
})

test('a corrupt database is unusable, and the message says to restore a backup', (t) => {
  const file = migrated(tempDir(t))
  // Garbage over page 1 after its 100-byte header: the schema cannot be read.
  const fd = openSync(file, 'r+')
  writeSync(fd, Buffer.alloc(3000, 0x5a), 0, 3000, 100)
  closeSync(fd)
  const err = openFailure(file)
  assert.ok(err instanceof DatabaseOpenError)
  assert.equal(err.transient, false)
  assert.match(err.message, new RegExp(`^cannot use the database ${file}: it is corrupt; restore a backup \\(SQLite: .+\\)$`))
})

test('a write lock held by another connection at open is transient, and the message names the file and the wait', (t) => {
  const file = migrated(tempDir(t))
  const holder = new DatabaseSync(file)
  t.after(() => holder.close())
  holder.exec('BEGIN IMMEDIATE')
  // The schema is current, so only the write check takes the lock: without it the open succeeds.
  const err = openFailure(file, { busyTimeoutMs: 20 })
  assert.ok(err instanceof DatabaseOpenError)
  assert.equal(err.transient, true)
  assert.equal(err.message, `cannot use the database ${file}: another process holds its write lock (waited 20 ms) (SQLite: database is locked)`)
  holder.exec('ROLLBACK')
  openDatabase(file, OPTIONS).close()
})

test('a full disk (SQLITE_FULL, played by PRAGMA max_page_count) is transient, and the message says the disk is full', (t) => {
  const file = join(tempDir(t), 'r.db')
  const err = openFailure(file, { onConnect: (db) => db.exec('PRAGMA max_page_count = 3') })
  assert.ok(err instanceof DatabaseOpenError)
  assert.equal(err.transient, true)
  assert.equal(err.message, `cannot use the database ${file}: the disk is full (SQLite: database or disk is full)`)
  // Nothing was left half-made: with room again it opens and migrates.
  openDatabase(file, OPTIONS).close()
})

test('the write check is a write rolled back: it leaves no trace', (t) => {
  const file = migrated(tempDir(t))
  const db = openDatabase(file, OPTIONS)
  t.after(() => db.close())
  assert.deepEqual(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'replenish_write_check'").all(), [])
  assert.equal(db.isTransaction, false)
})

test('a missing directory is a configuration mistake; a directory as the file is unusable', (t) => {
  const dir = tempDir(t)
  const missing = openFailure(join(dir, 'nope', 'r.db'))
  assert.ok(missing instanceof DatabaseDirectoryMissing)
  assert.equal(missing.message, `the directory ${join(dir, 'nope')} of the database ${join(dir, 'nope', 'r.db')} does not exist`)
  const asDir = join(dir, 'sub')
  mkdirSync(asDir)
  const err = openFailure(asDir)
  assert.ok(err instanceof DatabaseOpenError)
  assert.equal(err.transient, false)
  assert.equal(err.message, `cannot use the database ${asDir}: it is a directory, not a file (SQLite: unable to open database file)`)
})

test('run-time errors are told apart by the primary result code, extended codes included', (t) => {
  const db = new DatabaseSync(join(tempDir(t), 'x.db'))
  t.after(() => db.close())
  db.exec('PRAGMA max_page_count = 2; CREATE TABLE a (x)')
  const full = (() => { try { db.exec('CREATE TABLE b (x); CREATE TABLE c (x)') } catch (e) { return e } })()
  assert.equal(isTransientSqliteError(full), true)
  const syntax = (() => { try { db.exec('SELEKT 1') } catch (e) { return e } })()
  assert.equal(isTransientSqliteError(syntax), false)
  assert.equal(isTransientSqliteError({ code: 'ERR_SQLITE_ERROR', errcode: 5 | (1 << 8) }), true) // SQLITE_BUSY_RECOVERY
  assert.equal(isTransientSqliteError(new Error('database is locked')), false)
})
