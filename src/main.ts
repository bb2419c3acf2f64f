import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, parseArgsOptions } from './config.ts'
import { serve } from './cli/serve.ts'
import { backupCommand, createAdminTokenCommand, createKeyCommand, createUserCommand, migrateCommand, UsageError } from './cli/commands.ts'
import { processCommand } from './cli/process.ts'
import { helpText } from './cli/help.ts'
import { DatabaseTooNewError } from './store/migrations.ts'
import { DatabaseDirectoryMissing } from './store/db.ts'

export const VERSION = '0.1.0'

const out = (line: string): void => void process.stdout.write(line + '\n')
const err = (line: string): void => void process.stderr.write(line + '\n')

function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve(sig))
  })
}

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...parseArgsOptions(),
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      demo: { type: 'boolean' },
      'as-of': { type: 'string' },
      email: { type: 'string' },
      user: { type: 'string' },
    },
  })
  if (values.help) return (out(helpText(VERSION)), 0)
  if (values.version) return (out(VERSION), 0)
  const [command, sub, ...rest] = positionals
  const config = loadConfig(values, process.env)
  switch (command) {
    case 'serve':
      return serve(config, { demo: values.demo === true }, { out, err, stopSignal: stopSignal() })
    case 'process':
      return processCommand(config, values['as-of'], { out, err })
    case 'migrate':
      return migrateCommand(config, out)
    case 'backup':
      if (rest.length > 0) throw new UsageError('backup takes one file')
      return backupCommand(config, sub, out)
    case 'admin-tokens':
      if (sub !== 'create') throw new UsageError('usage: replenish admin-tokens create')
      return createAdminTokenCommand(config, out)
    case 'users':
      if (sub !== 'create') throw new UsageError('usage: replenish users create --email ADDRESS')
      return createUserCommand(config, values.email, out)
    case 'keys':
      if (sub !== 'create') throw new UsageError('usage: replenish keys create --user ID')
      return createKeyCommand(config, values.user, out)
    case undefined:
      throw new UsageError('no command given; try replenish --help')
    default:
      throw new UsageError(`unknown command: ${command}; try replenish --help`)
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof ConfigError || e instanceof UsageError) {
      err(`replenish: ${e.message}`)
      process.exit(2)
    }
    if (e instanceof Error && 'code' in e && typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) {
      err(`replenish: ${e.message}; try replenish --help`)
      process.exit(2)
    }
    if (e instanceof DatabaseTooNewError || e instanceof DatabaseDirectoryMissing) {
      err(`replenish: ${e.message}`)
      process.exit(3)
    }
    err(`replenish: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
    process.exit(1)
  },
)
