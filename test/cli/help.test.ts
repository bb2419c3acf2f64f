/**
 * Help per command (issue 29 item 1): `replenish --help` lists the commands one line each and the
 * settings every command reads; `replenish COMMAND --help` prints that command's usage, flags,
 * settings and exit statuses only. Every setting of src/config.ts, and every command's own flag,
 * is documented on exactly one page: a setting added without its line in
 * src/cli/help-settings.ts fails here, naming it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { OPTIONS } from '../../src/config.ts'
import { COMMAND_FLAGS } from '../../src/cli/main.ts'
import { HELP_COMMANDS } from '../../src/cli/help.ts'
import { SETTINGS_PAGE } from '../../src/cli/help-settings.ts'
import { versionLine } from '../../src/version.ts'
import { runCli } from './harness.ts'

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

/** Every page by name, as `replenish [COMMAND] --help` prints it. */
async function pages(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (const name of ['overview', ...HELP_COMMANDS]) {
    const run = await runCli(name === 'overview' ? ['--help'] : [name, '--help'])
    assert.equal(run.status, 0, name)
    assert.deepEqual(run.stderr, [], name)
    out.set(name, run.stdout)
  }
  return out
}

/** Lines that document a setting: its flag (or `(no flag)`), its variable and its default. */
const settingLine = (o: (typeof OPTIONS)[number]) => (line: string): boolean =>
  line.startsWith(o.envOnly ? '  (no flag) ' : `  --${o.flag} `) && line.includes(` ${o.env} `) && line.includes(`default: ${o.fallback ?? 'unset'}`)

test('every setting src/config.ts accepts is documented on exactly one help page, with its flag, variable, default and text', async () => {
  const all = await pages()
  for (const o of OPTIONS) {
    const on = [...all].filter(([, lines]) => lines.some(settingLine(o))).map(([name]) => name)
    assert.ok(
      Object.hasOwn(SETTINGS_PAGE, o.env),
      `${o.env}${o.envOnly ? '' : ` (--${o.flag})`} is in src/config.ts OPTIONS but on no help page: add the line \`${o.env}: 'serve',\` ` +
        `(or the page of the command that uses it; 'overview' when every command does) to SETTINGS_PAGE in src/cli/help-settings.ts`,
    )
    assert.deepEqual(on, [SETTINGS_PAGE[o.env]], `${o.env} is documented on ${on.join(', ') || 'no page'}`)
    const lines = all.get(on[0] as string) as string[]
    const at = lines.findIndex(settingLine(o))
    // Its text follows, wrapped under it.
    const text = lines.slice(at + 1).join('\n').slice(0, o.help.length + 40).replace(/\n\s+/g, ' ').trim()
    assert.ok(o.help.length > 0 && text.startsWith(o.help), `${o.env}: its help text follows its line`)
  }
  const known = new Set(OPTIONS.map((o) => o.env))
  for (const name of Object.keys(SETTINGS_PAGE)) assert.ok(known.has(name), `SETTINGS_PAGE names ${name}, which src/config.ts does not accept`)
  // The form a new setting takes when its page is a command's, with no flag: still found once.
  assert.ok(OPTIONS.some((o) => o.envOnly), 'an environment-only setting is among those checked')
})

test('every command\'s own flag is documented on its page and on no other', async () => {
  const all = await pages()
  for (const [flag, owner] of Object.entries(COMMAND_FLAGS)) {
    const page = owner.split(' ')[0] as string
    const on = [...all].filter(([, lines]) => lines.some((l) => l.startsWith(`  --${flag} `) || l === `  --${flag}`)).map(([name]) => name)
    assert.deepEqual(on, [page], `--${flag} (${owner})`)
    assert.ok((all.get(page) as string[]).some((l) => l.startsWith('Usage: ') || l.startsWith('       replenish ')), page)
    assert.match((all.get(page) as string[]).filter((l) => /^ {0,7}(Usage:)? +replenish /.test(l)).join('\n'), new RegExp(`--${flag}\\b`), `the usage of ${owner} shows --${flag}`)
  }
})

test('replenish --help lists every command on one line, and -h, help and help help print the same', async () => {
  const run = await runCli(['--help'])
  assert.equal(run.status, 0)
  const text = run.stdout.join('\n')
  assert.ok(text.startsWith(`replenish ${PACKAGE_VERSION}:`))
  const commands = text.slice(text.indexOf('Commands:\n') + 10, text.indexOf('\n\n', text.indexOf('Commands:\n'))).split('\n')
  assert.deepEqual(commands.map((l) => l.trim().split(' ')[0]), ['serve', 'process', 'migrate', 'backup', 'copy', 'import', 'admin-tokens', 'users', 'keys', 'mail-preview'])
  for (const line of commands) assert.match(line, /^ {2}[a-z-]+ +\S.{10,}$/, 'a name and one line about it')
  assert.match(text, /^ {2}--help, -h +/m)
  assert.match(text, /^ {2}--version, -v +/m)
  assert.match(text, /^Exit status: 0 done, 1 failure at run time .*, 2 bad command, flag or setting,\n3 the database cannot be used/m)
  // Only the settings every command reads: none of serve's.
  assert.doesNotMatch(text, /REPLENISH_PORT|REPLENISH_RATE_LIMIT/)
  for (const argv of [['-h'], ['help'], ['help', 'help']]) assert.deepEqual(await runCli(argv), run, argv.join(' '))
})

test('replenish COMMAND --help prints that command\'s usage, flags, settings and exit statuses only', async () => {
  const all = await pages()
  for (const name of HELP_COMMANDS) {
    const lines = all.get(name) as string[]
    const text = lines.join('\n')
    assert.match(lines[0] as string, new RegExp(`^Usage: replenish ${name}\\b`), name)
    // The other commands' usages are not there.
    for (const other of HELP_COMMANDS.filter((c) => c !== name && !c.startsWith(name) && !name.startsWith(c))) {
      assert.doesNotMatch(text, new RegExp(`^ *(Usage:)? *replenish ${other}\\b`, 'm'), `${name}'s page shows ${other}'s usage`)
    }
    const exit = text.slice(text.indexOf('\nExit status:\n'))
    assert.match(exit, /^\nExit status:\n {2}0 {2}\S[^]*\n {2}1 {2}\S[^]*\n {2}2 {2}\S[^]*\n {2}3 {2}the database cannot be used/, `${name}: exit statuses 0 to 3`)
    assert.match(text, /The settings every command reads are on replenish --help: --db, /, `${name} points to the settings every command reads`)
    // The same page whichever way it is asked for.
    assert.deepEqual(await runCli(['help', name]), await runCli([name, '-h']), name)
  }
  // A sub-command's --help is its command's page; a made-up command is a usage error.
  assert.deepEqual((await runCli(['admin-tokens', 'create', '--help'])).stdout, all.get('admin-tokens'))
  assert.deepEqual((await runCli(['users', 'create', '-h'])).stdout, all.get('users'))
  assert.deepEqual(await runCli(['launch', '--help']), { status: 2, stdout: [], stderr: ['replenish: unknown command "launch"; try replenish --help'] })
  assert.deepEqual(await runCli(['help', 'launch']), { status: 2, stdout: [], stderr: ['replenish: unknown command "launch"; try replenish --help'] })
  // --help wins over the rest of the line: a bad value is not read.
  assert.equal((await runCli(['serve', '--port', 'abc', '--help'])).status, 0)
})

test('serve\'s exit statuses keep issue 15\'s rule: a missing directory is 2, a full disk or a lock 1', async () => {
  const text = (await runCli(['serve', '--help'])).stdout.join('\n')
  const exitTable = text.slice(text.indexOf('Exit status:'))
  assert.match(exitTable, /^ {2}1 [^]*full disk[^]*lock held by another process[^]*^ {2}2 .*directory that does not exist/m)
  assert.doesNotMatch(exitTable.slice(exitTable.indexOf('  3  ')), /directory (that )?does not exist|no directory|full|lock/)
  assert.match(text, /^Serving: GET \/healthz/m)
})

test('--version and -v print the version, and from source say there is no commit or build date', async () => {
  for (const flag of ['--version', '-v']) {
    assert.deepEqual(await runCli([flag]), { status: 0, stdout: [`replenish ${PACKAGE_VERSION} (run from source: no commit or build date)`], stderr: [] })
  }
  // What build.mjs bakes in (test-binary/ runs the real binary).
  assert.equal(versionLine({ commit: '0123456789ab', date: '2026-11-25T06:00:00Z' }), `replenish ${PACKAGE_VERSION} (commit 0123456789ab, built 2026-11-25T06:00:00Z)`)
})
