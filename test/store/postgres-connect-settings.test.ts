/**
 * Issue 25 items 4 and 5, without a server: how a PostgreSQL URL's TLS parameters become
 * node-postgres's `ssl` option with libpq's meanings, and how a failure to connect becomes one
 * line with the right exit status (DatabaseOpenError.transient: 1; otherwise 3; a TLS setting
 * that cannot work: 2). The servers themselves: test/ops/postgres-tls.pg.test.ts and
 * test/ops/postgres-connect.pg.test.ts.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { tlsSettings, TlsSettingRefused } from '../../src/store/postgres/tls.ts'
import { connectError, DurabilityRefused } from '../../src/store/postgres/connect-errors.ts'
import { DatabaseOpenError } from '../../src/store/open.ts'

const URL_ = 'postgres://shop:pw@db.internal:5432/shop'
const files: Record<string, string> = { '/etc/ca.pem': 'CA PEM', '/etc/client.crt': 'CLIENT CERT', '/etc/client.key': 'CLIENT KEY' }
const read = (path: string): string => {
  const text = files[path]
  if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' })
  return text
}
const settings = (query: string, env: Record<string, string> = {}) => tlsSettings(`${URL_}${query}`, env, read)
/** What a mode checks, in words: whether it encrypts unverified, checks the chain, the name too. */
const checks = (query: string, env: Record<string, string> = {}): string => {
  const { options } = settings(query, env)
  if (options.rejectUnauthorized === false) return 'nothing'
  return options.checkServerIdentity === undefined ? `chain and name against ${options.ca ?? 'public CAs'}` : `chain against ${String(options.ca)}`
}

test('sslmode as libpq means it: require encrypts without verifying, verify-ca checks the chain, verify-full the name too', () => {
  assert.equal(settings('').mode, 'prefer', "libpq's default")
  assert.equal(checks('?sslmode=prefer'), 'nothing')
  assert.equal(checks('?sslmode=allow'), 'nothing')
  assert.equal(checks('?sslmode=require'), 'nothing')
  assert.equal(checks('?sslmode=require&sslrootcert=/etc/ca.pem'), 'chain against CA PEM', 'libpq: require with a root certificate is verify-ca')
  assert.equal(checks('?sslmode=verify-ca&sslrootcert=/etc/ca.pem'), 'chain against CA PEM')
  assert.equal(checks('?sslmode=verify-full&sslrootcert=/etc/ca.pem'), 'chain and name against CA PEM')
  assert.equal(checks('?sslmode=verify-full'), 'chain and name against public CAs')
  assert.equal(checks('?sslmode=verify-full&sslrootcert=system'), 'chain and name against public CAs')
  const client = settings('?sslmode=require&sslcert=/etc/client.crt&sslkey=/etc/client.key').options
  assert.deepEqual([client.cert, client.key], ['CLIENT CERT', 'CLIENT KEY'])
})

test('the TLS parameters leave the URL node-postgres gets (it would read them its own way, with a warning); the rest stays', () => {
  const tls = settings('?sslmode=require&sslrootcert=/etc/ca.pem&application_name=x&options=-c%20search_path%3Dt1')
  const u = new URL(tls.url)
  assert.deepEqual([...u.searchParams.keys()], ['application_name', 'options'])
  assert.equal(u.searchParams.get('options'), '-c search_path=t1')
  assert.equal(u.password, 'pw')
  assert.equal(settings('?application_name=x').url, `${URL_}?application_name=x`, 'a URL without them is passed as given')
})

test('PGSSLMODE and PGSSLROOTCERT fill what the URL leaves out; node-postgres\'s ssl= keeps its meaning', () => {
  assert.equal(settings('', { PGSSLMODE: 'disable' }).mode, 'disable')
  assert.equal(settings('?sslmode=require', { PGSSLMODE: 'disable' }).mode, 'require', 'the URL first, as libpq')
  assert.equal(checks('?sslmode=verify-ca', { PGSSLROOTCERT: '/etc/ca.pem' }), 'chain against CA PEM')
  assert.equal(settings('?ssl=true').mode, 'verify-full')
  assert.equal(settings('?ssl=no-verify').mode, 'require')
  assert.equal(settings('?ssl=0').mode, 'disable')
})

test('a TLS setting that cannot work is refused in one line (the CLI exits 2)', () => {
  const refused = (query: string, env: Record<string, string> = {}): string => {
    try {
      settings(query, env)
    } catch (err) {
      assert.ok(err instanceof TlsSettingRefused)
      return err.message
    }
    return 'accepted'
  }
  assert.equal(refused('?sslmode=verify_full'), 'the URL\'s sslmode "verify_full" is not one of libpq\'s sslmodes: disable, allow, prefer, require, verify-ca, verify-full')
  assert.equal(refused('', { PGSSLMODE: 'on' }), 'PGSSLMODE "on" is not one of libpq\'s sslmodes: disable, allow, prefer, require, verify-ca, verify-full')
  assert.equal(refused('?sslmode=verify-full&sslrootcert=/etc/nowhere.pem'), 'sslrootcert=/etc/nowhere.pem: the file cannot be read (ENOENT)')
  assert.match(refused('?sslmode=verify-ca'), /^sslmode=verify-ca needs the CA that signed the server's certificate: sslrootcert=/)
})

test('connection failures: one line each, transient (exit 1) or not (exit 3), the password never shown', () => {
  const open = (err: unknown, mode: 'prefer' | 'verify-full' = 'prefer'): DatabaseOpenError => {
    const out = connectError(URL_, err, mode)
    assert.ok(out instanceof DatabaseOpenError, `a DatabaseOpenError for ${String(err)}`)
    assert.ok(!out.message.includes('pw'), 'no password')
    assert.ok(!out.message.includes('\n'), 'one line')
    return out
  }
  const where = 'cannot use the database postgres://shop:*****@db.internal:5432/shop: '
  const scram = open(new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'))
  assert.deepEqual([scram.message, scram.transient], [`${where}the server asks for a password and none was given: set PGPASSWORD (or put it in the URL, postgres://user:password@host/db)`, false])
  const dns = open(Object.assign(new Error('getaddrinfo ENOTFOUND db.internal'), { code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname: 'db.internal' }))
  assert.deepEqual([dns.message, dns.transient], [`${where}no address found for its host "db.internal" (ENOTFOUND): check the host in --db / REPLENISH_DB`, true])
  const noTls = open(new Error('The server does not support SSL connections'), 'verify-full')
  assert.deepEqual([noTls.message, noTls.transient], [`${where}the server does not offer TLS, and sslmode=verify-full requires it: turn ssl on at the server, or lower sslmode (docs/postgresql.md)`, false])
  const cert = open(Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }), 'verify-full')
  assert.equal(cert.transient, false)
  assert.match(cert.message, /the server's TLS certificate or handshake was refused under sslmode=verify-full \(SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain\); sslrootcert=FILE names the CA/)
})

test('commits that are not durable are refused (exit 3) by class, not by name: the binary\'s minified bundle renames classes', () => {
  // What esbuild's minifier makes of the class: the same class under another name.
  const Renamed = class extends DurabilityRefused {}
  const out = connectError(URL_, new Renamed('synchronous_commit is off on the server'), 'prefer')
  assert.ok(out instanceof DatabaseOpenError)
  assert.equal(out.transient, false)
  assert.equal(out.message, 'cannot use the database postgres://shop:*****@db.internal:5432/shop: synchronous_commit is off on the server')
})
