/**
 * argv → command → exit status. Everything a command prints goes through `io`, and the status is
 * returned, not exited with, so tests run the whole CLI in-process; only src/main.ts touches
 * `process`. Exit statuses (also in --help): 0 done, 1 failure at run time (including a database
 * that may work later: a full disk, an I/O error, a lock held elsewhere), 2 bad command, flag or
 * configuration value (a database directory that does not exist, a database file that does not
 * exist for a command that does not make one), 3 the database cannot be used and restarting will
 * not change that (not a database, corrupt, newer schema, not writable), 130 a `process` run
 * stopped by SIGINT or SIGTERM after the batch in hand (process.ts).
 */
import { parseArgs } from 'node:util'
import { ConfigError, KNOWN_VARIABLES, loadConfig, OPTIONS, parseArgsOptions } from '../config.ts'
import { databaseErrorKind, DatabaseDirectoryMissing, DatabaseOpenError, TlsSettingRefused } from '../store/open.ts'
import { serve } from './serve.ts'
import { BackupFailed, backupCommand, createAdminTokenCommand, createKeyCommand, createUserCommand, listAdminTokensCommand, migrateCommand, revokeAdminTokenCommand, UsageError } from './commands.ts'
import { processCommand } from './process.ts'
import { importCommand } from './import.ts'
import { copyCommand } from './copy.ts'
import { helpText } from './help.ts'
import { mailPreviewCommand } from './mail-preview.ts'
import { VERSION, versionLine } from '../version.ts'

export interface CliIo {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT); `serve` and `process` wait for it. */
  readonly stopSignal: () => Promise<string>
}

export const EXIT = { ok: 0, failure: 1, usage: 2, database: 3 } as const

/**
 * Flags that belong to one command; given to another they are a usage error, not silently ignored.
 * Each is documented on its command's help page (test/cli/help.test.ts).
 */
export const COMMAND_FLAGS: Readonly<Record<string, string>> = { demo: 'serve', 'as-of': 'process', email: 'users create', user: 'keys create', force: 'backup', scope: 'admin-tokens create', label: 'admin-tokens create', from: 'copy', to: 'copy', locale: 'mail-preview', html: 'mail-preview' }

const ARG_OPTIONS = {
  ...parseArgsOptions(),
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  demo: { type: 'boolean' },
  'as-of': { type: 'string' },
  email: { type: 'string' },
  user: { type: 'string' },
  force: { type: 'boolean' },
  scope: { type: 'string' },
  label: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  locale: { type: 'string' },
  html: { type: 'boolean' },
} as const

export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: CliIo): Promise<number> {
  try {
    return await run(argv, env, io)
  } catch (e) {
    return failure(e, io)
  }
}

async function run(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: ARG_OPTIONS })
  if (values.help || positionals[0] === 'help') {
    // `replenish serve --help`, `replenish help serve`; `replenish help` and `--help` alone: the overview.
    const topic = positionals[0] === 'help' ? positionals[1] : positionals[0]
    const page = helpText(VERSION, topic)
    if (page === undefined) throw new UsageError(`unknown command ${JSON.stringify(topic)}; try replenish --help`)
    return (io.out(page), EXIT.ok)
  }
  if (values.version) return (io.out(versionLine()), EXIT.ok)

  const [command, sub, ...rest] = positionals
  const name = command === undefined ? undefined : ['admin-tokens', 'users', 'keys'].includes(command) ? `${command} ${sub ?? ''}`.trim() : command
  for (const [flag, owner] of Object.entries(COMMAND_FLAGS)) {
    if (values[flag as keyof typeof values] !== undefined && name !== owner) throw new UsageError(`--${flag} is only for \`replenish ${owner}\``)
  }
  for (const variable of Object.keys(env)) {
    if (variable.startsWith('REPLENISH_') && !KNOWN_VARIABLES.has(variable)) io.err(`replenish: warning: unknown variable ${variable} is ignored`)
  }
  const config = loadConfig(values, env)
  const noMore = (args: readonly (string | undefined)[]): void => {
    const extra = args.filter((a) => a !== undefined)
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])} for \`replenish ${name}\``)
  }

  switch (command) {
    case 'serve':
      noMore([sub, ...rest])
      return serve(config, { demo: values.demo === true }, { out: io.out, err: io.err, stopSignal: io.stopSignal() })
    case 'process':
      noMore([sub, ...rest])
      return processCommand(config, values['as-of'], { out: io.out, err: io.err, stopSignal: io.stopSignal() })
    case 'migrate':
      noMore([sub, ...rest])
      return migrateCommand(config, io.out)
    case 'import':
      noMore(rest)
      return importCommand(config, sub, io.out)
    case 'copy':
      noMore([sub, ...rest])
      return copyCommand(config, values.from, values.to, { out: io.out, err: io.err })
    case 'backup':
      noMore(rest)
      return backupCommand(config, sub, values.force === true, io.out)
    case 'admin-tokens':
      if (sub === 'create') return (noMore(rest), createAdminTokenCommand(config, values.scope, values.label, io.out))
      if (sub === 'list') return (noMore(rest), listAdminTokensCommand(config, io.out))
      if (sub === 'revoke') return (noMore(rest.slice(1)), revokeAdminTokenCommand(config, rest[0], io.out))
      throw new UsageError('usage: replenish admin-tokens create [--scope admin|read|metrics] [--label NAME] | list | revoke ID')
    case 'users':
      if (sub !== 'create') throw new UsageError('usage: replenish users create --email ADDRESS')
      noMore(rest)
      return createUserCommand(config, values.email, io.out)
    case 'mail-preview':
      noMore(rest)
      return mailPreviewCommand(config, sub, values.locale, values.html === true, io.out)
    case 'keys':
      if (sub !== 'create') throw new UsageError('usage: replenish keys create --user ID')
      noMore(rest)
      return createKeyCommand(config, values.user, io.out)
    case undefined:
      throw new UsageError('no command given; try replenish --help')
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}; try replenish --help`)
  }
}

/** One clear line on stderr and the documented status; a stack only for what is a bug. */
function failure(e: unknown, io: CliIo): number {
  const say = (line: string, status: number): number => (io.err(`replenish: ${line}`), status)
  if (e instanceof ConfigError || e instanceof UsageError) return say(e.message, EXIT.usage)
  const code = e instanceof Error && 'code' in e ? (e as NodeJS.ErrnoException).code : undefined
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec((e as Error).message)?.[1] ?? ''
    const secret = OPTIONS.find((o) => o.envOnly && `--${o.flag}` === flag.split('=')[0])
    if (secret) return say(`${flag.split('=')[0]} is not a flag: set ${secret.env} in the environment (a flag would show in ps)`, EXIT.usage)
    return say(`unknown flag ${flag}; try replenish --help`, EXIT.usage)
  }
  if (code?.startsWith('ERR_PARSE_ARGS') === true) return say(`${(e as Error).message}; try replenish --help`, EXIT.usage)
  // A missing directory is a wrong --db / REPLENISH_DB (config.ts says so first; this is a race).
  if (e instanceof DatabaseDirectoryMissing) return say(e.message, EXIT.usage)
  // A TLS setting of the PostgreSQL URL (or PGSSL*) that cannot work as given: a bad setting too.
  if (e instanceof TlsSettingRefused) return say(e.message, EXIT.usage)
  // Transient (1): systemd's Restart=on-failure retries; unusable (3): RestartPreventExitStatus.
  if (e instanceof DatabaseOpenError) return say(e.message, e.transient ? EXIT.failure : EXIT.database)
  if (e instanceof BackupFailed) return say(e.message, EXIT.failure)
  const databaseError = databaseErrorKind(e)
  if (databaseError !== undefined) {
    if (databaseError === 'transient') return say(`the database is not available now: ${(e as Error).message}`, EXIT.failure)
    return say(`the database cannot be used: ${(e as Error).message}`, EXIT.database)
  }
  // Only serve's listen resolves a name (config checks its syntax; resolving is I/O): a name
  // that does not exist is a bad setting (2); a DNS server that did not answer may answer on a
  // restart (1).
  if ((code === 'ENOTFOUND' || code === 'EAI_AGAIN') && (e as NodeJS.ErrnoException).syscall === 'getaddrinfo') {
    const host = JSON.stringify((e as { hostname?: string }).hostname ?? '?')
    return code === 'ENOTFOUND'
      ? say(`--host / REPLENISH_HOST: no address found for this host name, got ${host}`, EXIT.usage)
      : say(`--host / REPLENISH_HOST: the host name ${host} could not be resolved now (EAI_AGAIN: DNS did not answer)`, EXIT.failure)
  }
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    const err = e as NodeJS.ErrnoException & { address?: string; port?: number }
    return say(`cannot listen on ${err.address ?? '?'}:${err.port ?? '?'}: ${err.code}`, EXIT.failure)
  }
  return say(e instanceof Error ? (e.stack ?? e.message) : String(e), EXIT.failure)
}
