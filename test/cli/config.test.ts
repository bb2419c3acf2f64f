import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import dns from 'node:dns'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfig, OPTIONS } from '../../src/config.ts'
import { runCli, tempDir } from './harness.ts'

test('with nothing set every option takes its documented default', () => {
  const c = loadConfig({}, {})
  assert.deepEqual({ ...c }, {
    host: '127.0.0.1',
    port: 8080,
    db: 'data/replenish.db',
    dbPool: 10,
    dbStatementTimeoutMs: 30000,
    adminToken: undefined,
    timeZone: 'UTC',
    today: undefined,
    currency: 'USD',
    maxSuccessiveSkips: undefined,
    maxTotalSkips: undefined,
    cancellationNoticeDays: 0,
    reprocessingIntervalHours: 24,
    maxReprocessingDays: undefined,
    processEvery: 10,
    maxBodyBytes: 65536,
    metricsPublic: false,
    rateLimit: 50,
    rateBurst: 100,
    authFailureLimit: 20,
    headersTimeoutMs: 10000,
    requestTimeoutMs: 30000,
    keepAliveTimeoutMs: 5000,
    synchronous: 'FULL',
    readCacheMb: 16,
    webhookRetryBaseSeconds: 10,
    eventRetentionDays: 400,
    log: 'json',
    trustProxy: false,
    corsOrigins: [],
    shopName: 'replenish',
    shopUrl: undefined,
    shopLogoUrl: undefined,
    shopAccent: '#1d4ed8',
    publicUrl: undefined,
    upcomingDays: 3,
    smtpUrl: undefined,
    smtpTlsInsecure: false,
    smtpCaFile: undefined,
    mailFrom: undefined,
    mailLinkHours: 72,
    mailRetryBaseSeconds: 10,
    defaultLocale: 'en',
  })
  assert.ok(Object.isFrozen(c))
})

test('a flag wins over its variable, which wins over the default', () => {
  assert.equal(loadConfig({}, { REPLENISH_PORT: '9000' }).port, 9000)
  assert.equal(loadConfig({ port: '9100' }, { REPLENISH_PORT: '9000' }).port, 9100)
  assert.equal(loadConfig({ 'rate-limit': '0' }, { REPLENISH_RATE_LIMIT: '7' }).rateLimit, 0)
  assert.equal(loadConfig({}, { REPLENISH_RATE_LIMIT: '7' }).rateLimit, 7)
  // An empty variable is an unset one (a systemd `Environment=REPLENISH_PORT=` line).
  assert.equal(loadConfig({}, { REPLENISH_PORT: '' }).port, 8080)
})

test('the admin token is read from the environment only (argv shows in ps)', () => {
  assert.equal(loadConfig({ 'admin-token': 'from-argv' }, {}).adminToken, undefined)
  assert.equal(loadConfig({}, { REPLENISH_ADMIN_TOKEN: 'from-env-0123456789' }).adminToken, 'from-env-0123456789')
})

test('a bad value names the flag or the variable it came from, and the value', () => {
  const cases: [Record<string, string>, Record<string, string>, string][] = [
    [{ port: 'abc' }, {}, '--port: expected a port number from 0 to 65535, got "abc"'],
    [{}, { REPLENISH_PORT: 'abc' }, 'REPLENISH_PORT: expected a port number from 0 to 65535, got "abc"'],
    [{}, { REPLENISH_PORT: '65536' }, 'REPLENISH_PORT: expected a port number from 0 to 65535, got "65536"'],
    [{ 'rate-limit': '-1' }, {}, '--rate-limit: expected a whole number, got "-1"'],
    [{}, { REPLENISH_RATE_BURST: '0' }, 'REPLENISH_RATE_BURST: expected a whole number of at least 1, got "0"'],
    [{}, { REPLENISH_MAX_BODY_BYTES: '64k' }, 'REPLENISH_MAX_BODY_BYTES: expected a whole number, got "64k"'],
    [{}, { REPLENISH_METRICS_PUBLIC: 'maybe' }, 'REPLENISH_METRICS_PUBLIC: expected 1, true, yes or on to turn it on, or 0, false, no or off to turn it off (any case), got "maybe"'],
    [{}, { REPLENISH_TODAY: '2026-02-30' }, 'REPLENISH_TODAY: expected a real date as YYYY-MM-DD, got "2026-02-30"'],
    [{ 'time-zone': 'Mars/Olympus' }, {}, '--time-zone: expected an IANA time zone such as UTC or Europe/Paris, got "Mars/Olympus"'],
    [{}, { REPLENISH_CURRENCY: 'XYZ' }, 'REPLENISH_CURRENCY: expected an ISO 4217 currency code, got "XYZ"'],
    [{}, { REPLENISH_SYNCHRONOUS: 'OFF' }, 'REPLENISH_SYNCHRONOUS: expected FULL or NORMAL, got "OFF"'],
    [{}, { REPLENISH_LOG: 'text' }, 'REPLENISH_LOG: expected json or off, got "text"'],
    [{ db: '/no/such/dir/x.db' }, {}, '--db: the directory /no/such/dir does not exist, got "/no/such/dir/x.db"'],
    [{}, { REPLENISH_HEADERS_TIMEOUT_MS: '5000', REPLENISH_REQUEST_TIMEOUT_MS: '1000' }, 'REPLENISH_HEADERS_TIMEOUT_MS: must not be longer than REPLENISH_REQUEST_TIMEOUT_MS (5000 > 1000)'],
    [{ 'headers-timeout-ms': '5000' }, { REPLENISH_REQUEST_TIMEOUT_MS: '1000' }, '--headers-timeout-ms: must not be longer than REPLENISH_REQUEST_TIMEOUT_MS (5000 > 1000)'],
  ]
  for (const [flags, env, message] of cases) {
    assert.throws(() => loadConfig(flags, env), (e: unknown) => e instanceof ConfigError && e.message === message, message)
  }
})

test('REPLENISH_CORS_ORIGINS / --cors-origins: a list of origins, stored as browsers send them', () => {
  const c = loadConfig({}, { REPLENISH_CORS_ORIGINS: ' HTTPS://Shop.Example , http://localhost:3000,https://shop.example:443,http://[::1]:8081,https://bücher.example' })
  assert.deepEqual(c.corsOrigins, ['https://shop.example', 'http://localhost:3000', 'https://shop.example', 'http://[::1]:8081', 'https://xn--bcher-kva.example'])
  assert.ok(Object.isFrozen(c.corsOrigins))
  assert.deepEqual(loadConfig({ 'cors-origins': 'https://a.example' }, { REPLENISH_CORS_ORIGINS: 'https://b.example' }).corsOrigins, ['https://a.example'])
  assert.deepEqual(loadConfig({}, { REPLENISH_CORS_ORIGINS: '' }).corsOrigins, [])
})

test('a CORS entry that is not an origin stops start-up naming the variable and the entry', () => {
  const bad = ['https://shop.example/', 'https://shop.example/app', '*', 'https://*.shop.example', 'shop.example', 'ftp://shop.example',
    'https://user@shop.example', 'https://shop.example?x=1', 'https://shop.example#top', 'https://shop.example:99999', 'null', '']
  for (const entry of bad) {
    const raw = `https://ok.example,${entry}`
    assert.throws(() => loadConfig({}, { REPLENISH_CORS_ORIGINS: raw }), {
      name: 'ConfigError',
      message: `REPLENISH_CORS_ORIGINS: ${JSON.stringify(entry)} is not an origin: expected http:// or https://, a host and an optional port, with no path, no trailing slash and no *, got ${JSON.stringify(raw)}`,
    }, entry)
  }
  assert.throws(() => loadConfig({ 'cors-origins': 'https://shop.example/' }, {}), { message: /^--cors-origins: "https:\/\/shop.example\/" is not an origin/ })
})

// migrate, not serve: every command reads the whole configuration, and should the check break,
// migrate ends (and the test fails) where serve would keep listening.
test('a command with a bad REPLENISH_CORS_ORIGINS exits 2 with one line naming it', async (t) => {
  const db = join(tempDir(t), 'r.db')
  const run = await runCli(['migrate'], { REPLENISH_DB: db, REPLENISH_PORT: '0', REPLENISH_CORS_ORIGINS: 'https://shop.example/' })
  assert.equal(run.status, 2)
  assert.deepEqual(run.stdout, [])
  assert.deepEqual(run.stderr, ['replenish: REPLENISH_CORS_ORIGINS: "https://shop.example/" is not an origin: expected http:// or https://, a host and an optional port, with no path, no trailing slash and no *, got "https://shop.example/"'])
})

test('the database may not be a directory; a file in an existing directory is fine', (t) => {
  const dir = tempDir(t)
  mkdirSync(join(dir, 'db.sqlite'))
  assert.throws(() => loadConfig({}, { REPLENISH_DB: join(dir, 'db.sqlite') }), {
    message: `REPLENISH_DB: expected a file, not a directory, got ${JSON.stringify(join(dir, 'db.sqlite'))}`,
  })
  assert.equal(loadConfig({}, { REPLENISH_DB: join(dir, 'new.db') }).db, join(dir, 'new.db'))
})

test('values are normalised: currency upper-cased, booleans in the usual spellings', () => {
  const c = loadConfig({ currency: 'eur', synchronous: 'normal' }, { REPLENISH_METRICS_PUBLIC: 'true', REPLENISH_TRUST_PROXY: 'yes' })
  assert.equal(c.currency, 'EUR')
  assert.equal(c.synchronous, 'NORMAL')
  assert.equal(c.metricsPublic, true)
  assert.equal(c.trustProxy, true)
})

test('issue 25: a boolean takes exactly the spellings its message names, in any case, and nothing else', () => {
  const message = (raw: string): string => {
    try {
      loadConfig({}, { REPLENISH_TRUST_PROXY: raw })
      return ''
    } catch (err) {
      return (err as Error).message
    }
  }
  const text = message('maybe')
  const named = /expected (.+) to turn it on, or (.+) to turn it off \(any case\)/.exec(text)
  assert.ok(named, text)
  const words = (list: string): string[] => list.split(/, | or /)
  assert.deepEqual([words(named[1] as string), words(named[2] as string)], [['1', 'true', 'yes', 'on'], ['0', 'false', 'no', 'off']])
  for (const [list, value] of [[words(named[1] as string), true], [words(named[2] as string), false]] as const) {
    for (const raw of list.flatMap((w) => [w, w.toUpperCase()])) assert.equal(loadConfig({}, { REPLENISH_TRUST_PROXY: raw }).trustProxy, value, raw)
  }
  for (const raw of ['y', 'n', '2', 'enabled', 'truth', 'onn']) assert.notEqual(message(raw), '', raw)
})

test('every option has a REPLENISH_ variable, and every option but the secret has a flag', () => {
  for (const o of OPTIONS) {
    assert.match(o.env, /^REPLENISH_[A-Z_]+$/)
    assert.equal(o.env, `REPLENISH_${o.flag.toUpperCase().replaceAll('-', '_')}`)
  }
  // Secrets: argv shows in `ps`. The SMTP URL holds the mail server's password (C17).
  assert.deepEqual(OPTIONS.filter((o) => o.envOnly).map((o) => o.env), ['REPLENISH_ADMIN_TOKEN', 'REPLENISH_SMTP_URL'])
})

test('the read cache must fit in a third of the V8 heap; the refusal says how to raise the heap', async () => {
  const { checkReadCacheFits } = await import('../../src/cli/app.ts')
  const mb = 1048576
  assert.doesNotThrow(() => checkReadCacheFits(16, 108 * mb))
  assert.doesNotThrow(() => checkReadCacheFits(36, 108 * mb))
  assert.doesNotThrow(() => checkReadCacheFits(0, 108 * mb))
  assert.throws(() => checkReadCacheFits(37, 108 * mb), {
    name: 'ConfigError',
    message: '--read-cache-mb / REPLENISH_READ_CACHE_MB: 37 MB does not fit a V8 heap of 108 MB (at most a third of it: 36); lower it, or raise the heap: replenish --node-options=--max-old-space-size=148 …',
  })
})

test('REPLENISH_HOST / --host: an IP literal must be a valid one, anything else a host name by RFC 1123', () => {
  for (const host of ['127.0.0.1', '0.0.0.0', '::', '::1', 'fe80::1', 'localhost', 'api.example.com', 'example.com.', 'a-1.b2']) {
    assert.equal(loadConfig({}, { REPLENISH_HOST: host }).host, host)
  }
  const bad = ['300.1.1.1', '1.2.3', '10.0.0.256', '::g', '[::1]', '1::2::3', 'bad_name', '-lead.example', 'trail-.example', 'a..b', 'x'.repeat(64), 'has space', 'a/b']
  for (const host of bad) {
    assert.throws(() => loadConfig({}, { REPLENISH_HOST: host }), {
      name: 'ConfigError',
      message: `REPLENISH_HOST: expected an IP address (such as 127.0.0.1 or ::1) or a host name, got ${JSON.stringify(host)}`,
    })
  }
  assert.throws(() => loadConfig({ host: '300.1.1.1' }, {}), { message: /^--host: expected an IP address/ })
})

test('serve with an invalid REPLENISH_HOST exits 2 with one line naming it, without a stack', async (t) => {
  const db = join(tempDir(t), 'r.db')
  assert.deepEqual(await runCli(['serve'], { REPLENISH_DB: db, REPLENISH_PORT: '0', REPLENISH_HOST: '300.1.1.1' }), {
    status: 2,
    stdout: [],
    stderr: ['replenish: REPLENISH_HOST: expected an IP address (such as 127.0.0.1 or ::1) or a host name, got "300.1.1.1"'],
  })
})

/**
 * Resolving a name is I/O that config leaves to serve's listen. The name service is replaced
 * here (net's listen looks it up through dns.lookup), so the test needs no network and no DNS.
 */
function failLookup(t: TestContext, code: string): void {
  t.mock.method(dns, 'lookup', (hostname: string, _options: unknown, callback: (err: NodeJS.ErrnoException) => void) => {
    const err: NodeJS.ErrnoException & { hostname?: string } = new Error(`getaddrinfo ${code} ${hostname}`)
    Object.assign(err, { code, errno: -3008, syscall: 'getaddrinfo', hostname })
    process.nextTick(callback, err)
  })
}

test('serve with a host name that does not resolve exits 2 with one line naming the setting, without a stack', async (t) => {
  failLookup(t, 'ENOTFOUND')
  const db = join(tempDir(t), 'r.db')
  for (const [argv, env] of [[['serve'], { REPLENISH_HOST: 'no-such-host.invalid' }], [['serve', '--host', 'no-such-host.invalid'], {}]] as const) {
    assert.deepEqual(await runCli([...argv], { REPLENISH_DB: db, REPLENISH_PORT: '0', ...env }), {
      status: 2,
      stdout: [],
      stderr: ['replenish: --host / REPLENISH_HOST: no address found for this host name, got "no-such-host.invalid"'],
    })
  }
})

test('a DNS server that does not answer exits 1 (a restart may succeed), with one line naming the setting', async (t) => {
  failLookup(t, 'EAI_AGAIN')
  const db = join(tempDir(t), 'r.db')
  assert.deepEqual(await runCli(['serve'], { REPLENISH_DB: db, REPLENISH_PORT: '0', REPLENISH_HOST: 'api.example.com' }), {
    status: 1,
    stdout: [],
    stderr: ['replenish: --host / REPLENISH_HOST: the host name "api.example.com" could not be resolved now (EAI_AGAIN: DNS did not answer)'],
  })
})
