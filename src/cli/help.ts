/**
 * The help pages: `replenish --help` lists the commands, one line each, and the settings every
 * command reads; `replenish COMMAND --help` (or `replenish help COMMAND`) prints that command's
 * usage, flags, settings and exit statuses only. Each setting of src/config.ts is documented on
 * exactly one page, the one help-settings.ts names; its line is rendered from OPTIONS.
 */
import { OPTIONS } from '../config.ts'
import { SETTINGS_PAGE, type HelpPage } from './help-settings.ts'

type CommandPage = Exclude<HelpPage, 'overview'>

interface Command {
  /** The overview's line. */
  readonly summary: string
  readonly usage: readonly string[]
  /** What it does (wrapped when printed). */
  readonly about: string
  /** The command's own flags (cli/main.ts COMMAND_FLAGS), with what they take. */
  readonly flags?: readonly (readonly [string, string])[]
  /** Paragraphs after the settings. */
  readonly notes?: readonly string[]
  /** Statuses 2 and, where it differs from the common text, 1, in the command's own words. */
  readonly exit: { readonly ok: string; readonly failure?: string; readonly usage: string; readonly interrupted?: string }
}

/** What a value looks like, by the kind of option (the help shows `--port PORT`, not `--port <string>`). */
const METAVAR: Readonly<Record<string, string>> = {
  db: 'FILE|URL', string: 'VALUE', host: 'HOST', port: 'PORT', count: 'N', positive: 'N', optional_count: 'N', bool: '0|1',
  date: 'YYYY-MM-DD', zone: 'ZONE', currency: 'CODE', sync: 'FULL|NORMAL', log: 'json|off', origins: 'ORIGINS',
  smtp_url: 'URL', mail_from: 'ADDRESS', locale: 'en|es|fr|de', file: 'FILE',
}

const RUNTIME_FAILURE = 'failure at run time: a database that may work later (a full disk, an I/O error, a lock held by another process: worth a retry), or an unexpected error'
const UNUSABLE = [
  '3  the database cannot be used, and restarting will not change that: not a database,',
  '   corrupt, a schema newer than this binary, a file or directory this user cannot write',
]

const COMMANDS: Readonly<Record<CommandPage, Command>> = {
  serve: {
    summary: 'run the HTTP APIs, the web console, webhook deliveries and the processor on its schedule',
    usage: ['replenish serve [--demo] [settings]'],
    about: 'Serves the customer API (/api/v1), the admin API (/admin/api/v1), the staff console (/admin/) and the customer portal (/portal/); delivers webhooks; runs the processor every REPLENISH_PROCESS_EVERY minutes. Creates or upgrades the database schema first.',
    flags: [['--demo', 'into an empty database, seed a demo user, API key, admin token, catalog and payment source, and print them on stderr']],
    notes: [
      'Serving: GET /healthz (process up), GET /readyz (the database answers and writes succeed),',
      'GET /metrics (Prometheus text; an admin token of scope admin or metrics unless',
      'REPLENISH_METRICS_PUBLIC=1). One JSON line per request on stdout after the',
      '"replenish listening on URL" line. SIGTERM or SIGINT stops accepting, lets requests in flight',
      'finish (at most 10 s), closes the database and exits 0; a second signal stops at once.',
      '',
      'Memory: the binary runs Node with --max-semi-space-size=4 --max-old-space-size=96 (peak RSS',
      '140–148 MB under the bench, its WAL checkpoint thread included). Node flags go before the',
      'command, as in `replenish --node-options="--max-old-space-size=256" serve`; NODE_OPTIONS is ignored.',
    ],
    exit: {
      ok: 'stopped by SIGTERM or SIGINT, after draining',
      failure: 'failure at run time: the port is taken, or a database that may work later (a full disk, an I/O error, a lock held by another process: worth a restart), or an unexpected error',
      usage: 'bad flag or setting (--db in a directory that does not exist, a host name that does not resolve)',
    },
  },
  process: {
    summary: 'turn due subscriptions into installments once, then exit',
    usage: ['replenish process [--as-of YYYY-MM-DD]'],
    about: 'One run of the processor: an installment for each due subscription (installment.created), installment.retry_due for failed ones whose retry time has come, ends and cancellations that are due, then subscription.upcoming for deliveries at most REPLENISH_UPCOMING_DAYS away (with REPLENISH_SMTP_URL set, their mails and those of its cancellations are queued for serve to send: give it serve\'s mail settings). Waits while another processor (serve\'s, or another run) holds the lease. Progress on stderr, the summary on stdout. serve runs the same every REPLENISH_PROCESS_EVERY minutes.',
    flags: [['--as-of YYYY-MM-DD', 'run as of this date instead of today: the whole clock moves, as REPLENISH_TODAY would']],
    exit: {
      ok: 'done',
      usage: 'bad --as-of or setting, or no database file at --db (only serve and migrate make one)',
      interrupted: 'stopped by SIGINT (Ctrl-C) or SIGTERM once the batch in hand was done ("interrupted after N of M; run it again to go on"): what it did stays done, and running it again goes on from there',
    },
  },
  migrate: {
    summary: 'create or upgrade the database schema, then exit',
    usage: ['replenish migrate'],
    about: 'Brings the schema up to this version and prints it. serve and the other commands migrate too; this is for a deploy step (systemd ExecStartPre). Migrations only move forward: a database newer than this binary is refused (status 3).',
    exit: { ok: 'the schema is up to date', usage: 'bad setting' },
  },
  backup: {
    summary: 'write a consistent copy of a SQLite database (safe while serve runs)',
    usage: ['replenish backup FILE [--force]'],
    about: 'Copies the SQLite database at --db with SQLite\'s online backup into FILE.partial-PID beside FILE, then renames it into place. A PostgreSQL database is backed up with pg_dump or its provider\'s snapshots instead.',
    flags: [['--force', 'replace FILE when it exists (without it, an existing FILE is refused)']],
    exit: {
      ok: 'FILE written',
      failure: 'writing the copy failed (a full disk, say): the database itself is fine; or an unexpected error',
      usage: 'no FILE, FILE exists without --force or is a directory, its directory does not exist or cannot be written, no database at --db, a PostgreSQL --db',
    },
  },
  copy: {
    summary: 'copy a SQLite database into an empty PostgreSQL one, ids kept',
    usage: ['replenish copy --from FILE --to postgres://user@host:port/database'],
    about: 'Migrates the PostgreSQL database, copies every row into it in one transaction (a copy that fails leaves it empty), then prints each table\'s rows on both sides. FILE is read in one snapshot: stop serve on it first. The password is better given as PGPASSWORD.',
    flags: [
      ['--from FILE', 'the SQLite database to copy'],
      ['--to URL', 'the empty PostgreSQL database to copy into (postgres:// or postgresql://)'],
    ],
    exit: {
      ok: 'copied, and every table has as many rows on both sides',
      failure: 'the counts differ, or failure at run time (a database that may work later, an unexpected error)',
      usage: 'no --from or --to, a --to that is not a PostgreSQL URL, a target that is not empty, rows that break a foreign key (nothing copied)',
    },
  },
  import: {
    summary: 'bring users, keys, payment sources, catalog and subscriptions from JSON Lines, ids kept',
    usage: ['replenish import FILE'],
    about: 'Imports the JSON Lines of docs/import.md, all or nothing, in one unit of work: users, API keys, payment methods and sources, catalog items and subscriptions, ids kept. Importing the same file again changes nothing. POST /admin/api/v1/imports does the same through serve.',
    exit: { ok: 'imported (or already there)', usage: 'FILE cannot be read, is empty, or a line is refused (named with its number and field; nothing imported), no database file at --db (only serve and migrate make one)' },
  },
  'admin-tokens': {
    summary: 'create, list and revoke the admin API\'s tokens',
    usage: [
      'replenish admin-tokens create [--scope admin|read|metrics] [--label NAME]',
      'replenish admin-tokens list',
      'replenish admin-tokens revoke ID',
    ],
    about: 'create prints a new token once, alone on the last line. Scope admin (the default): everything; read: GET on the admin API but the admin tokens; metrics: GET /metrics only. list shows the stored tokens (id, scope, prefix, label, created, last used; never a token); revoke refuses one from its next request. The same through /admin/api/v1/admin_tokens.',
    flags: [
      ['--scope admin|read|metrics', 'create: what the token may do (default admin)'],
      ['--label NAME', 'create: a note of at most 100 characters shown by list'],
    ],
    exit: { ok: 'done', usage: 'an unknown sub-command, a bad --scope or --label, an ID that is not a stored live token, no database file at --db (only serve and migrate make one)' },
  },
  users: {
    summary: 'create a customer',
    usage: ['replenish users create --email ADDRESS'],
    about: 'Makes a customer and prints its id alone on the last line. The admin API (POST /admin/api/v1/users) does the same.',
    flags: [['--email ADDRESS', 'the customer\'s address, NAME@DOMAIN, not taken by another customer']],
    exit: { ok: 'created', usage: 'no --email, an address that is not one or is taken, no database file at --db (only serve and migrate make one)' },
  },
  keys: {
    summary: 'create an API key for a customer',
    usage: ['replenish keys create --user ID'],
    about: 'Makes an API key for the customer and prints it once, alone on the last line. The admin API (POST /admin/api/v1/users/:id/api_keys) does the same.',
    flags: [['--user ID', 'the customer\'s id']],
    exit: { ok: 'created', usage: 'no --user, an ID that is not a number or not a customer, no database file at --db (only serve and migrate make one)' },
  },
  'mail-preview': {
    summary: 'print a customer\'s mail as this configuration writes it (no database)',
    usage: ['replenish mail-preview upcoming|payment_failed|canceled [--locale en|es|fr|de] [--html]'],
    about: 'Renders one kind of customer mail (docs/email.md) for a made-up customer with two items priced in REPLENISH_CURRENCY, with this configuration\'s shop name, accent, sender, time zone, link base and link lifetime, and prints its headers and plain text. Touches no database and sends nothing.',
    flags: [
      ['--locale en|es|fr|de', 'the customer\'s language (default REPLENISH_DEFAULT_LOCALE)'],
      ['--html', 'print the HTML part alone (to open in a browser) instead of the headers and text'],
    ],
    exit: { ok: 'printed', usage: 'no KIND or an unknown one, a --locale not in the list, a bad setting' },
  },
}

/** The names `replenish help NAME` and `replenish NAME --help` know. */
export const HELP_COMMANDS: readonly CommandPage[] = Object.keys(COMMANDS) as CommandPage[]

/**
 * The page for `replenish [COMMAND] --help`: the overview without a command (or for `help`),
 * the command's page, or undefined for a command that does not exist.
 */
export function helpText(version: string, command?: string): string | undefined {
  if (command === undefined || command === 'help') return overview(version)
  return Object.hasOwn(COMMANDS, command) ? commandPage(command as CommandPage) : undefined
}

function overview(version: string): string {
  return [
    `replenish ${version}: recurring-delivery subscriptions, one binary, one SQLite file (or PostgreSQL)`,
    '',
    'Usage: replenish COMMAND [flags]',
    '       replenish COMMAND --help     that command\'s flags, settings and exit statuses (or: replenish help COMMAND)',
    '',
    'Commands:',
    ...HELP_COMMANDS.map((name) => `  ${name.padEnd(14)} ${COMMANDS[name].summary}`),
    '',
    'Every command:',
    ...settingsOf('overview'),
    ...column('--help, -h', 'this text, or a command\'s page after its name'),
    ...column('--version, -v', 'the version, and the commit and date of the build'),
    ...column('--node-options="FLAGS"', 'Node flags for the binary, before the command (NODE_OPTIONS is ignored)'),
    '',
    ...CONFIGURATION,
    '',
    'Exit status: 0 done, 1 failure at run time (worth a retry), 2 bad command, flag or setting,',
    '3 the database cannot be used; each command\'s page says when.',
  ].join('\n')
}

const CONFIGURATION = [
  'Settings: a flag wins over its REPLENISH_* variable, which wins over the default. Every command',
  'reads all of them; a bad value stops the command with status 2 before anything happens, and an',
  'unknown REPLENISH_* variable gets a warning.',
]

function commandPage(name: CommandPage): string {
  const c = COMMANDS[name]
  const own = settingsOf(name)
  const common = OPTIONS.filter((o) => SETTINGS_PAGE[o.env] === 'overview').map((o) => (o.envOnly ? o.env : `--${o.flag}`))
  return [
    ...c.usage.map((line, i) => `${i === 0 ? 'Usage:' : '      '} ${line}`),
    '',
    ...wrap(c.about, ''),
    ...(c.flags ? ['', 'Flags:', ...c.flags.flatMap(([flag, text]) => column(flag, text))] : []),
    ...(own.length > 0 ? ['', 'Settings:', ...own, '', ...CONFIGURATION] : []),
    '',
    ...wrap(`The settings every command reads are on replenish --help: ${common.join(', ')}.`, ''),
    ...(c.notes ? ['', ...c.notes] : []),
    '',
    'Exit status:',
    ...wrap(`0  ${c.exit.ok}`, '  ', 3),
    ...wrap(`1  ${c.exit.failure ?? RUNTIME_FAILURE}`, '  ', 3),
    ...wrap(`2  ${c.exit.usage}`, '  ', 3),
    ...UNUSABLE.map((line) => `  ${line}`),
    ...(c.exit.interrupted ? wrap(`130  ${c.exit.interrupted}`, '  ', 5) : []),
  ].join('\n')
}

/** The two lines of each setting documented on `page`: flag, variable and default, then its text. */
function settingsOf(page: HelpPage): string[] {
  return OPTIONS.filter((o) => SETTINGS_PAGE[o.env] === page).flatMap((o) => {
    const flag = o.envOnly ? '(no flag)' : `--${o.flag} ${METAVAR[o.kind] ?? 'VALUE'}`
    return [`  ${flag.padEnd(32)} ${o.env.padEnd(38)} default: ${o.fallback ?? 'unset'}`, ...wrap(o.help, '      ')]
  })
}

/** A flag and its text in two columns, the text wrapped under itself. */
function column(left: string, text: string): string[] {
  const [first = '', ...rest] = wrap(text, '', 0, WIDTH - 35)
  return [`  ${left.padEnd(32)} ${first}`, ...rest.map((line) => `${' '.repeat(35)}${line}`)]
}

const WIDTH = 100

/** Words of `text` in lines of at most WIDTH (a longer word stays whole), each after `indent`; lines after the first also after `hang` spaces. */
function wrap(text: string, indent: string, hang = 0, width = WIDTH): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    const room = width - indent.length - (lines.length > 0 ? hang : 0)
    if (line !== '' && line.length + 1 + word.length > room) {
      lines.push(line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  lines.push(line)
  return lines.map((l, i) => `${indent}${i > 0 ? ' '.repeat(hang) : ''}${l}`)
}
