import { accessSync, constants, existsSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Config } from '../config.ts'
import { sha256 } from '../api/kit/auth.ts'
import { newApiKey } from '../admin/users.ts'
import { createAdminToken, isAdminScope, MAX_LABEL_LENGTH } from '../admin/admin-tokens.ts'
import { backupStore, databaseErrorKind, DatabaseOpenError, isPostgresLocation, SCHEMA_VERSION, shownLocation } from '../store/open.ts'
import type { Store } from '../store/api.ts'
import { openConfiguredStore } from './app.ts'

export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Writing the backup's copy failed (a full disk, say): the database itself is fine (exit 1, not 3). */
export class BackupFailed extends Error {
  override readonly name = 'BackupFailed'
}

type Out = (line: string) => void

/**
 * The configured store for a command that works on what is there already: every command but
 * `serve` and `migrate`, which make a new database. A SQLite file that does not exist is refused
 * (status 2), not made empty: a `process` timer with a wrong path stayed green for ever (issue 25).
 */
export function openExistingStore(config: Config): Promise<Store> {
  if (!isPostgresLocation(config.db) && !existsSync(config.db)) {
    throw new UsageError(`there is no database at ${config.db} (--db / REPLENISH_DB); \`replenish migrate\` makes a new one`)
  }
  return openConfiguredStore(config)
}

/** `replenish migrate`: bring the schema up to date and say where it stands. */
export async function migrateCommand(config: Config, out: Out): Promise<number> {
  const store = await openConfiguredStore(config)
  await store.close()
  out(`database ${shownLocation(config.db)} is at schema version ${SCHEMA_VERSION}`)
  return 0
}

/**
 * `replenish backup FILE [--force]`: a consistent copy, safe while `serve` is running on the same
 * file. It only reads, so it opens the database without the start-up write check.
 */
export async function backupCommand(config: Config, target: string | undefined, force: boolean, out: Out): Promise<number> {
  if (!target) throw new UsageError('backup needs a target file: replenish backup FILE [--force]')
  if (isPostgresLocation(config.db)) {
    throw new UsageError('replenish backup copies a SQLite file; back up a PostgreSQL database with its own tools: pg_dump, or your provider\'s snapshots and point-in-time recovery (docs/operations.md)')
  }
  if (!existsSync(config.db)) throw new UsageError(`there is no database at ${config.db} to back up`)
  if (!existsSync(dirname(target))) throw new UsageError(`cannot write the backup: the directory ${dirname(target)} does not exist`)
  if (existsSync(target) && statSync(target).isDirectory()) throw new UsageError(`cannot write the backup: ${target} is a directory`)
  if (!writableDirectory(dirname(target))) throw new UsageError(`cannot write the backup: this user cannot create files in the directory ${dirname(target)}`)
  if (resolve(target) === resolve(config.db)) throw new UsageError('the backup cannot be the database itself')
  // A typo in FILE must not cost the backup that was there.
  if (existsSync(target) && !force) throw new UsageError(`cannot write the backup: ${target} already exists; add --force to replace it`)
  // Written beside the target and renamed into place: an interrupted backup never leaves a torn
  // file under the target's name, and an older backup there is replaced only by a whole one.
  const partial = `${target}.partial-${process.pid}`
  try {
    await backupStore(config.db, partial, { synchronous: config.synchronous })
    renameSync(partial, target)
  } catch (err) {
    rmSync(partial, { force: true })
    if (err instanceof DatabaseOpenError || databaseErrorKind(err) === undefined) throw err
    throw new BackupFailed(`cannot write the backup ${target}: ${(err as Error).message}`, { cause: err })
  }
  out(`backup of ${config.db} written to ${target}`)
  return 0
}

function writableDirectory(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * `replenish admin-tokens create [--scope admin|read|metrics] [--label NAME]`: the token alone on
 * the last line of stdout, so scripts can capture it.
 */
export async function createAdminTokenCommand(config: Config, scopeRaw: string | undefined, labelRaw: string | undefined, out: Out): Promise<number> {
  const scope = scopeRaw ?? 'admin'
  if (!isAdminScope(scope)) throw new UsageError(`--scope: ${JSON.stringify(scopeRaw)} is not a scope (expected admin, read or metrics)`)
  const label = labelRaw === undefined || labelRaw.trim() === '' ? null : labelRaw.trim()
  if (label !== null && label.length > MAX_LABEL_LENGTH) throw new UsageError(`--label: is too long (maximum is ${MAX_LABEL_LENGTH} characters)`)
  const store = await openExistingStore(config)
  let token: string
  try {
    token = (await store.write((tx) => createAdminToken(tx.accounts, scope, label))).token
  } finally {
    await store.close()
  }
  out(`admin token created (scope ${scope}); it is shown only this once:`)
  out(token)
  return 0
}

/** `replenish admin-tokens list`: a table of the tokens that are not revoked; never a token. */
export async function listAdminTokensCommand(config: Config, out: Out): Promise<number> {
  const store = await openExistingStore(config)
  const rows: string[][] = [['ID', 'SCOPE', 'PREFIX', 'LABEL', 'CREATED_AT', 'LAST_USED_AT']]
  try {
    for (let after = 0; ;) {
      const page = await store.accounts.listAdminTokens(after, 100)
      for (const t of page) rows.push([String(t.id), t.scope, t.prefix, t.label ?? '-', t.created_at, t.last_used_at ?? 'never'])
      if (page.length < 100) break
      after = page[page.length - 1]?.id ?? after
    }
  } finally {
    await store.close()
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? []
  for (const r of rows) out(r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd())
  return 0
}

/** `replenish admin-tokens revoke ID`: refused from the next request on. */
export async function revokeAdminTokenCommand(config: Config, idRaw: string | undefined, out: Out): Promise<number> {
  if (idRaw === undefined) throw new UsageError('admin-tokens revoke needs the token id: replenish admin-tokens revoke ID')
  if (!/^[1-9]\d{0,14}$/.test(idRaw)) throw new UsageError(`admin-tokens revoke: ${JSON.stringify(idRaw)} is not a token id (expected a whole number from 1)`)
  const store = await openExistingStore(config)
  try {
    await store.write(async (tx) => {
      if (!(await tx.accounts.findAdminToken(Number(idRaw)))) throw new UsageError(`no admin token with id ${idRaw} (see replenish admin-tokens list)`)
      await tx.accounts.revokeAdminToken(Number(idRaw))
    })
  } finally {
    await store.close()
  }
  out(`admin token ${idRaw} revoked`)
  return 0
}

export async function createUserCommand(config: Config, email: string | undefined, out: Out): Promise<number> {
  if (email === undefined || email === '') throw new UsageError('users create needs --email ADDRESS')
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`--email: ${JSON.stringify(email)} is not a valid email address (expected NAME@DOMAIN)`)
  const store = await openExistingStore(config)
  try {
    // The check and the insert in one unit: nothing can take the address between them.
    const user = await store.write(async (tx) => {
      if (await tx.accounts.emailTaken(email)) throw new UsageError(`a user with email ${email} already exists`)
      return tx.accounts.createUser(email, null)
    })
    out(`user ${user.id} created`)
    out(String(user.id))
  } finally {
    await store.close()
  }
  return 0
}

export async function createKeyCommand(config: Config, userRaw: string | undefined, out: Out): Promise<number> {
  if (userRaw === undefined || userRaw === '') throw new UsageError('keys create needs --user ID')
  if (!/^[1-9]\d{0,14}$/.test(userRaw)) throw new UsageError(`--user: ${JSON.stringify(userRaw)} is not a user id (expected a whole number from 1)`)
  const store = await openExistingStore(config)
  try {
    const key = newApiKey()
    const userId = await store.write(async (tx) => {
      const user = await tx.accounts.findUser(Number(userRaw))
      if (!user) throw new UsageError(`no user with id ${userRaw}`)
      await tx.accounts.createApiKey(user.id, sha256(key), key.slice(0, 8))
      return user.id
    })
    out(`API key created for user ${userId}; it is shown only this once:`)
    out(key)
  } finally {
    await store.close()
  }
  return 0
}
