/**
 * Issue 25 item 4: TLS to PostgreSQL as libpq means it, on two throwaway clusters of the test's
 * own: one that speaks TLS only (a certificate of a CA made here with openssl, for 127.0.0.1;
 * pg_hba.conf refuses connections without TLS) and one without TLS. `require` encrypts without
 * verifying and prints nothing (node-postgres alone verified it as verify-full and printed a
 * 10-line warning); `verify-ca` checks the chain and not the name, `verify-full` both; `prefer`
 * and `allow` go with whatever the server takes. What cannot work is one line on stderr: exit 3
 * for the server's side (no TLS, a certificate refused), exit 2 for a setting that is not one.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCli, spawnCli, tempDir } from '../cli/harness.ts'
import { startPostgresCluster, type ThrowawayCluster } from '../helpers/postgres.ts'
import { openPostgresStore } from '../../src/store/postgres/store.ts'

const NOBODY = 65534

/** A CA and a server certificate it signed, for the IP address 127.0.0.1 only (not the name localhost). */
function certificates(t: TestContext): { dir: string; ca: string } {
  const dir = tempDir(t)
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=replenish-test-ca')
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=db.test')
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n')
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext')
  // Only TLS connections get in.
  writeFileSync(join(dir, 'pg_hba.conf'), 'hostssl all all 127.0.0.1/32 trust\n')
  // The server refuses a key others may read; as root the tests run it as nobody (helpers/postgres.ts).
  chmodSync(join(dir, 'server.key'), 0o600)
  if (process.getuid?.() === 0) for (const f of ['', 'server.key', 'server.crt', 'pg_hba.conf']) chownSync(join(dir, f), NOBODY, NOBODY)
  return { dir, ca: join(dir, 'ca.pem') }
}

async function cluster(t: TestContext, settings: Record<string, string> = {}): Promise<ThrowawayCluster> {
  const c = await startPostgresCluster({ settings })
  t.after(() => c.stop())
  return c
}

/** Whether the store's connections are encrypted, as the server sees them. */
async function encrypted(url: string): Promise<boolean> {
  const store = await openPostgresStore(url, { poolSize: 1, statementTimeoutMs: 10_000, synchronous: 'FULL' })
  try {
    const { rows } = await store.pool.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')
    return rows[0]?.ssl === true
  } finally {
    await store.close()
  }
}

/** `replenish migrate` on `url`: its status and its stderr, which must be one line unless it is empty. */
async function migrate(url: string): Promise<{ status: number; line: string }> {
  const run = await runCli(['migrate'], { REPLENISH_DB: url })
  const lines = run.stderr.filter((l) => l !== '')
  assert.ok(lines.length <= 1, `one line at most:\n${lines.join('\n')}`)
  return { status: run.status, line: lines[0] ?? '' }
}

test('a server that speaks TLS only: require, prefer and allow encrypt without verifying; verify-ca checks the chain, verify-full the name too', async (t) => {
  const certs = certificates(t)
  const pg = await cluster(t, { ssl: 'on', ssl_cert_file: join(certs.dir, 'server.crt'), ssl_key_file: join(certs.dir, 'server.key'), hba_file: join(certs.dir, 'pg_hba.conf') })
  const at = (host: string, query: string): string => `postgres://postgres@${host}:${pg.port}/postgres?${query}`

  for (const mode of ['require', 'prefer', 'allow']) assert.equal(await encrypted(at('127.0.0.1', `sslmode=${mode}`)), true, mode)
  assert.equal(await encrypted(at('127.0.0.1', `sslmode=verify-full&sslrootcert=${certs.ca}`)), true)
  // By the name localhost the certificate (for 127.0.0.1) has the wrong name: verify-ca does not look.
  assert.equal(await encrypted(at('localhost', `sslmode=verify-ca&sslrootcert=${certs.ca}`)), true)

  const wrongName = await migrate(at('localhost', `sslmode=verify-full&sslrootcert=${certs.ca}`))
  assert.equal(wrongName.status, 3)
  assert.match(wrongName.line, /^replenish: cannot use the database postgres:\/\/postgres@localhost:\d+\/postgres\?sslmode=verify-full&sslrootcert=\S+: the server's TLS certificate or handshake was refused under sslmode=verify-full \(ERR_TLS_CERT_ALTNAME_INVALID: /)
  const unknownCa = await migrate(at('127.0.0.1', 'sslmode=verify-full'))
  assert.equal(unknownCa.status, 3)
  assert.match(unknownCa.line, /the server's TLS certificate or handshake was refused under sslmode=verify-full \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY): .*sslrootcert=FILE names the CA/)
  const plain = await migrate(at('127.0.0.1', 'sslmode=disable'))
  assert.equal(plain.status, 3, 'pg_hba.conf refuses it: a person must change a setting')
  assert.match(plain.line, /no pg_hba\.conf entry for host "127\.0\.0\.1", user "postgres", database "postgres", no encryption/)

  // The process prints nothing about TLS: node-postgres's own warning for require is not reached.
  const quiet = spawnCli(t, ['migrate'], { env: { REPLENISH_DB: at('127.0.0.1', 'sslmode=require') } })
  assert.deepEqual(await quiet.exited, { code: 0, signal: null })
  assert.equal(quiet.stderr(), '')
  assert.match(quiet.stdout(), /is at schema version \d+/)
})

test('a server without TLS: prefer (the default) goes without; require and verify-full are one line and exit 3; an unknown sslmode exits 2', async (t) => {
  const pg = await cluster(t)
  assert.equal(await encrypted(pg.url), false)
  assert.equal(await encrypted(`${pg.url}?sslmode=prefer`), false)
  for (const mode of ['require', 'verify-full']) {
    const refused = await migrate(`${pg.url}?sslmode=${mode}`)
    assert.equal(refused.status, 3)
    assert.equal(refused.line, `replenish: cannot use the database ${pg.url}?sslmode=${mode}: the server does not offer TLS, and sslmode=${mode} requires it: turn ssl on at the server, or lower sslmode (docs/postgresql.md)`)
  }
  const unknown = await migrate(`${pg.url}?sslmode=on`)
  assert.equal(unknown.status, 2)
  assert.equal(unknown.line, 'replenish: the URL\'s sslmode "on" is not one of libpq\'s sslmodes: disable, allow, prefer, require, verify-ca, verify-full')
  const missing = await migrate(`${pg.url}?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem`)
  assert.equal(missing.status, 2)
  assert.equal(missing.line, 'replenish: sslrootcert=/nonexistent/ca.pem: the file cannot be read (ENOENT)')
})
