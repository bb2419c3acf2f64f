import { OPTIONS } from '../config.ts'

/** What a value looks like, by the kind of option (the help shows `--port PORT`, not `--port <string>`). */
const METAVAR: Readonly<Record<string, string>> = {
  db: 'FILE', string: 'VALUE', port: 'PORT', count: 'N', positive: 'N', optional_count: 'N', bool: '0|1',
  date: 'YYYY-MM-DD', zone: 'ZONE', currency: 'CODE', sync: 'FULL|NORMAL', log: 'json|off', origins: 'ORIGINS',
  smtp_url: 'URL', mail_from: 'ADDRESS', locale: 'en|es|fr|de', file: 'FILE',
}

/** The whole manual: every command, flag and REPLENISH_* variable with its default, and the exit statuses. */
export function helpText(version: string): string {
  const options = OPTIONS.flatMap((o) => {
    const flag = o.envOnly ? '(no flag)' : `--${o.flag} ${o.key === 'host' ? 'HOST' : (METAVAR[o.kind] ?? 'VALUE')}`
    const fallback = o.fallback === undefined ? 'unset' : o.fallback
    return [`  ${flag.padEnd(32)} ${o.env.padEnd(38)} default: ${fallback}`, `      ${o.help}`]
  })
  return [
    `replenish ${version}: recurring-delivery subscriptions, one binary, one SQLite file (or PostgreSQL)`,
    '',
    'Usage: replenish COMMAND [flags]',
    '',
    'Commands:',
    '  serve [--demo]                run the HTTP API, and the processor on its schedule; --demo seeds',
    '                                a demo user, key, admin token, catalog and payment source into an empty database',
    '  process [--as-of YYYY-MM-DD]  turn due subscriptions into installments once, then exit',
    '  migrate                       create or upgrade the database schema, then exit',
    '  backup FILE [--force]         write a consistent copy of the database (safe while serve runs);',
    '                                an existing FILE is replaced only with --force (SQLite; a PostgreSQL',
    '                                database is backed up with pg_dump or its provider\'s snapshots)',
    '  copy --from FILE --to URL     copy a SQLite database into an empty PostgreSQL one (postgres://…), ids kept,',
    '                                in one transaction; prints each table\'s rows on both sides (exit 1 if they',
    '                                differ). FILE is read in one snapshot: stop serve on it first',
    '  import FILE                   bring users, API keys, payment methods and sources, catalog items and',
    '                                subscriptions from JSON Lines (docs/import.md), ids kept, all or nothing;',
    '                                importing the same file again changes nothing',
    '  admin-tokens create [--scope admin|read|metrics] [--label NAME]',
    '                                make an admin API token (printed once, alone on the last line);',
    '                                scope admin (default): everything; read: GET on the admin API but admin tokens; metrics: GET /metrics',
    '  admin-tokens list             the stored tokens (id, scope, prefix, label, created, last used; never a token)',
    '  admin-tokens revoke ID        refuse a stored token from the next request on',
    '  users create --email ADDRESS  make a customer (its id alone on the last line)',
    '  keys create --user ID         make an API key for a customer (printed once, alone on the last line)',
    '  mail-preview upcoming|payment_failed|canceled [--locale en|es|fr|de] [--html]',
    '                                print a customer\'s mail as this configuration writes it, for a made-up',
    '                                customer (headers and text; --html: the HTML part); no database (docs/email.md)',
    '  help, --help, -h              this text',
    '  --version, -v                 the version',
    '',
    'Configuration: a flag wins over its REPLENISH_* variable, which wins over the default. Every',
    'command reads all of it; a bad value stops the command with status 2 before anything happens.',
    '',
    ...options,
    '',
    'Serving: GET /healthz (process up), GET /readyz (the database answers and writes succeed),',
    'GET /metrics (Prometheus text; an admin token of scope admin or metrics unless',
    'REPLENISH_METRICS_PUBLIC=1). One JSON line per request on',
    'stdout after the "replenish listening on URL" line. SIGTERM or SIGINT stops accepting, lets',
    'requests in flight finish (at most 10 s), closes the database and exits 0; a second signal',
    'stops at once.',
    '',
    'Memory: the binary runs Node with --max-semi-space-size=4 --max-old-space-size=96 (peak RSS',
    '140–148 MB under the bench, its WAL checkpoint thread included). Node flags go before the',
    'command, as in `replenish --node-options="--max-old-space-size=256" serve`; NODE_OPTIONS is ignored.',
    '',
    'Exit status:',
    '  0  done',
    '  1  failure at run time (the port is taken, an unexpected error), or a database that may work',
    '     later: a full disk, an I/O error, a lock held by another process (worth a restart)',
    '  2  bad command, flag or configuration value (--db in a directory that does not exist)',
    '  3  the database cannot be used, and restarting will not change that: not a database,',
    '     corrupt, a schema newer than this binary, a file or directory this user cannot write',
  ].join('\n')
}
