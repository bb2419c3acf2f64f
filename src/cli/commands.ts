import { existsSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Config } from '../config.ts'
import { sha256 } from '../api/shared/auth.ts'
import { newAdminToken, newApiKey } from '../admin/users.ts'
import { SCHEMA_VERSION } from '../store/migrations.ts'
import { openConfiguredStore } from './app.ts'

export class UsageError extends Error {
  override readonly name = 'UsageError'
}

type Out = (line: string) => void

/** `replenish migrate`: bring the schema up to date and say where it stands. */
export function migrateCommand(config: Config, out: Out): number {
  const store = openConfiguredStore(config)
  store.close()
  out(`database ${config.db} is at schema version ${SCHEMA_VERSION}`)
  return 0
}

/** `replenish backup FILE`: a consistent copy, safe while `serve` is running on the same file. */
export async function backupCommand(config: Config, target: string | undefined, out: Out): Promise<number> {
  if (!target) throw new UsageError('backup needs a target file: replenish backup FILE')
  if (!existsSync(config.db)) throw new UsageError(`there is no database at ${config.db} to back up`)
  if (!existsSync(dirname(target))) throw new UsageError(`cannot write the backup: the directory ${dirname(target)} does not exist`)
  if (existsSync(target) && statSync(target).isDirectory()) throw new UsageError(`cannot write the backup: ${target} is a directory`)
  if (resolve(target) === resolve(config.db)) throw new UsageError('the backup cannot be the database itself')
  // Written beside the target and renamed into place: an interrupted backup never leaves a torn
  // file under the target's name, and an older backup there is replaced only by a whole one.
  const partial = `${target}.partial-${process.pid}`
  const store = openConfiguredStore(config)
  try {
    await store.backup(partial)
    renameSync(partial, target)
  } catch (err) {
    rmSync(partial, { force: true })
    throw err
  } finally {
    store.close()
  }
  out(`backup of ${config.db} written to ${target}`)
  return 0
}

/** `replenish admin-tokens create`: the token alone on the last line of stdout, so scripts can capture it. */
export async function createAdminTokenCommand(config: Config, out: Out): Promise<number> {
  const store = openConfiguredStore(config)
  const token = newAdminToken()
  try {
    await store.write(() => store.accounts.createAdminToken(sha256(token), token.slice(0, 10)))
  } finally {
    store.close()
  }
  out('admin token created; it is shown only this once:')
  out(token)
  return 0
}

export async function createUserCommand(config: Config, email: string | undefined, out: Out): Promise<number> {
  if (!email || !/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError('users create needs --email ADDRESS')
  const store = openConfiguredStore(config)
  try {
    if (store.accounts.emailTaken(email)) throw new UsageError(`a user with email ${email} already exists`)
    const user = await store.write(() => store.accounts.createUser(email, null))
    out(`user ${user.id} created`)
    out(String(user.id))
  } finally {
    store.close()
  }
  return 0
}

export async function createKeyCommand(config: Config, userRaw: string | undefined, out: Out): Promise<number> {
  if (!userRaw || !/^[1-9]\d*$/.test(userRaw)) throw new UsageError('keys create needs --user ID')
  const store = openConfiguredStore(config)
  try {
    const user = store.accounts.findUser(Number(userRaw))
    if (!user) throw new UsageError(`no user with id ${userRaw}`)
    const key = newApiKey()
    await store.write(() => store.accounts.createApiKey(user.id, sha256(key), key.slice(0, 8)))
    out(`API key created for user ${user.id}; it is shown only this once:`)
    out(key)
  } finally {
    store.close()
  }
  return 0
}
