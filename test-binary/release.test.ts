/**
 * The release artefact (issue 29 item 2), as a user gets it: release.mjs packs the dist/replenish
 * that `npm run build` made; in an empty directory, a user who is not root (nobody, when the tests
 * run as root) checks the tarball with `sha256sum -c SHA256SUMS`, unpacks it, asks the binary its
 * version and serves a request, with no node on PATH.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chownSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { request } from '../test/helpers/server.ts'
import { spawnProcess, tempDir } from '../test/cli/harness.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
const NAME = `replenish-${VERSION}-linux-${process.arch}`
const NOBODY = 65534
const isRoot = process.getuid?.() === 0
const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin'

if (!existsSync(join(ROOT, 'dist', 'replenish'))) throw new Error('dist/replenish is missing: run `npm run build` first')

/** A command as the unprivileged user: nobody through setpriv when root, else this user as is. */
function asUser(command: string, args: string[]): [string, string[]] {
  return isRoot ? ['/usr/bin/setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', command, ...args]] : [command, args]
}

async function runAsUser(t: TestContext, cwd: string, command: string, args: string[], env: Record<string, string> = { PATH: SYSTEM_PATH }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnProcess(t, ...asUser(command, args), { cwd, env })
  const { code } = await child.exited
  return { code, stdout: child.stdout(), stderr: child.stderr() }
}

/** An empty directory the unprivileged user owns. */
function userDir(t: TestContext): string {
  const dir = tempDir(t)
  if (isRoot) chownSync(dir, NOBODY, NOBODY)
  return dir
}

/** The tarball and SHA256SUMS, packed from dist/replenish into a directory of their own. */
function pack(): string {
  const out = mkdtempSync(join(tmpdir(), 'replenish-release-'))
  // Shared by the tests (node:test's after() inside a test would run at that test's end).
  process.once('exit', () => rmSync(out, { recursive: true, force: true }))
  const packed = spawnSync(process.execPath, ['release.mjs', '--out', out], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(packed.status, 0, packed.stderr)
  return out
}

/** Packing takes seconds (gzip of 100 MiB): the tests share one. */
let first: string | undefined
const packed = (): string => (first ??= pack())

/** Copies the release's files into `dir`, owned by the unprivileged user, as a download would be. */
function download(out: string, dir: string): void {
  for (const file of ['SHA256SUMS', `${NAME}.tar.gz`]) {
    copyFileSync(join(out, file), join(dir, file))
    if (isRoot) chownSync(join(dir, file), NOBODY, NOBODY)
  }
}

test('the tarball unpacked by an unprivileged user in an empty directory: the sum checks, --version names the build, it serves', async (t) => {
  const out = packed()
  assert.deepEqual(readdirSync(out).sort(), ['SHA256SUMS', `${NAME}.tar.gz`])
  assert.match(readFileSync(join(out, 'SHA256SUMS'), 'utf8'), new RegExp(`^[0-9a-f]{64}  ${NAME.replaceAll('.', '\\.')}\\.tar\\.gz\\n$`))

  const home = userDir(t)
  download(out, home)
  const unpacked = await runAsUser(t, home, '/bin/sh', ['-c', `sha256sum -c SHA256SUMS && tar -xzf ${NAME}.tar.gz`])
  assert.deepEqual(unpacked, { code: 0, stdout: `${NAME}.tar.gz: OK\n`, stderr: '' })

  const dir = join(home, NAME)
  assert.deepEqual(readdirSync(dir).sort(), ['CHANGELOG.md', 'LICENSE', 'README.md', 'THIRD-PARTY-LICENSES.txt', 'docs', 'replenish'])
  for (const doc of ['operations.md', 'webhooks.md', 'postgresql.md', 'import.md']) assert.ok(existsSync(join(dir, 'docs', doc)), doc)
  assert.ok(!existsSync(join(dir, 'docs', 'tools')), 'the scripts that regenerate the docs stay in the repository')
  assert.equal(statSync(join(dir, 'replenish')).mode & 0o777, 0o755)
  if (isRoot) assert.equal(statSync(join(dir, 'replenish')).uid, NOBODY, 'unpacked by nobody, owned by nobody')
  assert.match(readFileSync(join(dir, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright \(c\) 2026 replenish contributors\n/)
  assert.match(readFileSync(join(dir, 'THIRD-PARTY-LICENSES.txt'), 'utf8'), /^Node\.js v24\.[^]*^pg \d+\.\d+\.\d+ \(MIT\)$/m)
  assert.match(readFileSync(join(dir, 'CHANGELOG.md'), 'utf8'), /^## \[Unreleased\]$/m)

  // No node on PATH: the binary is all there is.
  const bare = { PATH: '/nonexistent' }
  const version = await runAsUser(t, home, join(dir, 'replenish'), ['--version'], bare)
  assert.equal(version.code, 0, version.stderr)
  const stamp = /^replenish (\S+) \(commit ([0-9a-f]{12})(-dirty)?, built (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)\n$/.exec(version.stdout)
  assert.ok(stamp, version.stdout)
  assert.equal(stamp[1], VERSION)
  const head = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' })
  if (head.status === 0) assert.equal(stamp[2], head.stdout.trim(), 'the commit of this checkout, which npm run build built')
  if (process.env['SOURCE_DATE_EPOCH'] === undefined) {
    assert.ok(Math.abs(Date.parse(stamp[4] as string) - statSync(join(ROOT, 'dist', 'replenish')).mtimeMs) < 5 * 60_000, 'built when dist/replenish was')
  }

  // The default database is made under the working directory on first start, as README says.
  const serve = spawnProcess(t, ...asUser(join(dir, 'replenish'), ['serve', '--port', '0']), { cwd: home, env: { ...bare, REPLENISH_ADMIN_TOKEN: 'release-test-admin-token' } })
  const url = (await serve.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string
  assert.equal((await request(url, 'GET', '/readyz')).status, 200)
  const created = await request(url, 'POST', '/admin/api/v1/users', { key: 'release-test-admin-token', json: { user: { email: 'ada@example.com' } } })
  assert.equal(created.status, 201)
  assert.ok(existsSync(join(home, 'data', 'replenish.db')))
  if (isRoot) assert.equal(statSync(join(home, 'data', 'replenish.db')).uid, NOBODY)
  serve.kill('SIGTERM')
  assert.deepEqual(await serve.exited, { code: 0, signal: null })
})

test('a tarball changed after packing fails `sha256sum -c`', async (t) => {
  const out = packed()
  const home = userDir(t)
  download(out, home)
  const tarball = join(home, `${NAME}.tar.gz`)
  const bytes = readFileSync(tarball)
  bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0xff
  writeFileSync(tarball, bytes)
  const checked = await runAsUser(t, home, '/usr/bin/sha256sum', ['-c', 'SHA256SUMS'])
  assert.equal(checked.code, 1)
  assert.equal(checked.stdout, `${NAME}.tar.gz: FAILED\n`)
})

test('packing the same binary twice gives the same bytes (SOURCE_DATE_EPOCH or the build date; owners, order and gzip header fixed)', () => {
  const sums = [packed(), pack()].map((out) => readFileSync(join(out, 'SHA256SUMS'), 'utf8'))
  assert.equal(sums[0], sums[1])
})
