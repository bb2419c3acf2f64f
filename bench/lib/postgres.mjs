import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import { pinned } from './process.mjs'

/**
 * The PostgreSQL side of `npm run bench -- --db …`: a throwaway cluster the bench starts itself
 * (`--db postgres`), or a fresh schema in an existing database (`--db postgres://…`), so the
 * bench never touches tables it did not make.
 */

const NOBODY = 65534
const DEBIAN = '/usr/lib/postgresql'

/** Debian's newest versioned bin directory, else PATH (as test/helpers/postgres.ts looks). */
export function postgresBinDir() {
  const versions = existsSync(DEBIAN) ? readdirSync(DEBIAN).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) if (existsSync(join(DEBIAN, v, 'bin', 'postgres'))) return join(DEBIAN, v, 'bin')
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb'))) return dir
  throw new Error('PostgreSQL is not installed (no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH); Debian/Ubuntu: apt-get install -y postgresql')
}

/**
 * A cluster made by initdb in `dir/postgres` and served on a free port of 127.0.0.1, durable like
 * the SQLite run (fsync on, full_page_writes on, synchronous_commit on: a commit is acknowledged
 * once its WAL is on disk). Pinned to `cpu` when given: the bench puts it on the servers' core,
 * so wrk keeps its own. PostgreSQL refuses to run as root, so as root initdb and postgres run as
 * `nobody` (setpriv); `dir` is then opened to it for traversal only. Resolves once it accepts
 * connections, with `stop()` (a fast shutdown).
 */
export async function startCluster({ dir, cpu, maxConnections }) {
  const bin = postgresBinDir()
  const asRoot = process.getuid?.() === 0
  const home = join(dir, 'postgres')
  mkdirSync(home)
  if (asRoot) {
    chmodSync(dir, 0o711)
    chownSync(home, NOBODY, NOBODY)
  }
  const as = (command, args) =>
    asRoot ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', join(bin, command), ...args]] : [join(bin, command), args]
  const data = join(home, 'data')
  // --no-sync: only initdb's own files skip the flush; the server itself runs durable.
  const init = spawnSync(...as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C']), { cwd: home, encoding: 'utf8' })
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.stdout}${init.stderr}${init.error?.message ?? ''}`)
  const port = await freePort()
  const [command, args] = pinned(cpu, ...as('postgres', [
    '-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
    '-c', 'fsync=on', '-c', 'full_page_writes=on', '-c', 'synchronous_commit=on',
    '-c', `max_connections=${maxConnections}`,
  ]))
  const child = spawn(command, args, { cwd: home, stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`postgres did not start within 30 s:\n${log}`)), 30_000)
    child.stderr.on('data', (chunk) => {
      log = (log + chunk).slice(-4000)
      if (log.includes('database system is ready to accept connections')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`postgres exited (${code}) before it was ready:\n${log}`))
    })
  })
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pid: child.pid,
    dataDir: data,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGINT') // fast shutdown: nothing left to wait for once the bench is done
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000)
      await exited
      clearTimeout(kill)
    },
  }
}

/**
 * A schema of its own in an existing database: the URL for replenish (its connections' search_path
 * is that schema) and `drop()`, which removes it with everything the bench wrote.
 */
export async function freshSchema(baseUrl) {
  const schema = `replenish_bench_${randomBytes(6).toString('hex')}`
  await withClient(baseUrl, (c) => c.query(`CREATE SCHEMA ${schema}`))
  const u = new URL(baseUrl)
  u.searchParams.set('options', `-c search_path=${schema}`)
  return {
    schema,
    url: u.toString(),
    drop: () => withClient(baseUrl, (c) => c.query(`DROP SCHEMA ${schema} CASCADE`)),
  }
}

/** The server's version, and the two settings that make a commit durable, as the results record them. */
export async function serverFacts(url) {
  return withClient(url, async (c) => {
    const show = async (name) => (await c.query(`SHOW ${name}`)).rows[0][name]
    return { version: await show('server_version'), durability: `fsync=${await show('fsync')}, synchronous_commit=${await show('synchronous_commit')}` }
  })
}

/** The URL as the bench prints it: never a password. */
export function maskedUrl(url) {
  const u = new URL(url)
  if (u.password) u.password = '*****'
  return u.toString()
}

/** One connection for the length of `job`. */
export async function withClient(url, job) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await job(client)
  } finally {
    await client.end()
  }
}

/** A port nothing listens on now (the OS's pick for port 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}
