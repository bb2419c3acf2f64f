import { OPTIONS } from '../config.ts'

export function helpText(version: string): string {
  const width = Math.max(...OPTIONS.map((o) => o.env.length))
  const vars = OPTIONS.map((o) => {
    const flag = o.envOnly ? '(environment only)' : `--${o.flag}`
    const fallback = o.fallback === undefined ? 'unset' : o.fallback
    return `  ${o.env.padEnd(width)}  ${flag.padEnd(30)} ${o.help} [default: ${fallback}]`
  })
  return [
    `replenish ${version}: recurring-delivery subscriptions, one binary, one SQLite file`,
    '',
    'Usage: replenish COMMAND [flags]',
    '',
    'Commands:',
    '  serve [--demo]               run the HTTP API (and the processor on its schedule);',
    '                               --demo seeds a demo user, key and catalog into an empty database',
    '  process [--as-of YYYY-MM-DD] turn due subscriptions into installments once, then exit',
    '  migrate                      create or upgrade the database schema, then exit',
    '  backup FILE                  write a consistent copy of the database (safe while serving)',
    '  admin-tokens create          make an admin API token (printed once, last line of stdout)',
    '  users create --email ADDR    make a customer',
    '  keys create --user ID        make an API key for a customer (printed once, last line)',
    '  --help, -h                   this text',
    '  --version, -v                the version',
    '',
    'Configuration: flags win over REPLENISH_* variables, which win over defaults.',
    ...vars,
    '',
    'Exit status: 0 done; 1 unexpected failure; 2 bad command, flag or configuration value;',
    '3 database cannot be used (newer schema than this binary, or unreadable).',
  ].join('\n')
}
