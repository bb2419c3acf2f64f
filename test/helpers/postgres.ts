/**
 * A throwaway PostgreSQL for one test: a cluster made by initdb in a temporary directory, served
 * on a free port of 127.0.0.1 only (no Unix socket), with durability off (nothing here needs to
 * survive), stopped and removed after the test. PostgreSQL refuses to run as root, so when the
 * tests are root (CI containers) initdb and postgres run as `nobody` (setpriv), as
 * test/cli/startup-checks.test.ts runs the CLI. psql runs as the test's own user, over TCP.
 *
 * The server binaries must be installed (Debian: `apt-get install postgresql`; .ci/run does it).
 * When they are missing the test fails with that sentence: it is never skipped.
 */
import { spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'

const NOBODY = 65534

export interface ThrowawayPostgres {
  readonly port: number
  /** Runs psql against `database` (as the superuser `postgres`); rejects with its stderr unless it exits 0. */
  psql(database: string, args: readonly string[]): Promise<string>
}

/** Where initdb, postgres and psql are: Debian's versioned directory (newest first), else PATH. */
export function postgresBinDir(): string {
  const debian = '/usr/lib/postgresql'
  const versions = existsSync(debian) ? readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) if (existsSync(join(debian, v, 'bin', 'postgres'))) return join(debian, v, 'bin')
  for (const dir of (process.env['PATH'] ?? '').split(':')) if (dir && existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb'))) return dir
  throw new Error(
    'PostgreSQL is not installed: no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH. ' +
      'This test runs the export SQL of docs/import.md on a real PostgreSQL: install it (Debian/Ubuntu: ' +
      'apt-get install -y postgresql; .ci/run does so on a clean machine).',
  )
}

export async function startPostgres(t: TestContext): Promise<ThrowawayPostgres> {
  const cluster = await startPostgresCluster()
  t.after(() => cluster.stop())
  return cluster
}

export interface ClusterOptions {
  /** Connections the server accepts (the whole suite's stores and servers share one cluster). */
  readonly maxConnections?: number
}

/**
 * The same throwaway cluster, stopped by the caller (test/run.ts runs the suite on it). Commits
 * report `synchronous_commit = on`, as the product requires by default, while `fsync=off` keeps
 * them from waiting for the disk: nothing here needs to survive a crash of the machine.
 */
export async function startPostgresCluster(options: ClusterOptions = {}): Promise<ThrowawayPostgres & { readonly url: string; stop(): Promise<void> }> {
  const bin = postgresBinDir()
  const dir = mkdtempSync(join(tmpdir(), 'replenish-pg-'))
  const asRoot = process.getuid?.() === 0
  let stopServer = async (): Promise<void> => {}
  // One function, so the order holds: the server stops, then its directory goes.
  const stop = async (): Promise<void> => {
    await stopServer()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    if (asRoot) chownSync(dir, NOBODY, NOBODY)
    const server = (command: string, args: readonly string[]): [string, string[]] =>
      asRoot ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', join(bin, command), ...args]] : [join(bin, command), [...args]]

    const data = join(dir, 'data')
    await run(...server('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C']), { cwd: dir })
    const port = await freePort()
    const [command, args] = server('postgres', [
      '-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
      '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', `max_connections=${options.maxConnections ?? 20}`,
    ])
    const child = spawn(command, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
    let log = ''
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    stopServer = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGINT') // fast shutdown
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(kill)
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`postgres did not start within 20 s:\n${log}`)), 20_000)
      child.stderr.on('data', (chunk: Buffer) => {
        log += chunk.toString()
        if (log.includes('database system is ready to accept connections')) {
          clearTimeout(timer)
          resolve()
        }
      })
      void exited.then((code) => {
        clearTimeout(timer)
        reject(new Error(`postgres exited (${code}) before it was ready:\n${log}`))
      })
    })
    return {
      port,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop,
      psql: (database, extra) =>
        run(existsSync(join(bin, 'psql')) ? join(bin, 'psql') : 'psql', ['-X', '-q', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', ...extra], { cwd: dir }),
    }
  } catch (err) {
    await stop()
    throw err
  }
}

/** A port nothing listens on now (the OS's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const address = s.address()
      s.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/** Runs a command to its end: its stdout, or a rejection with its stderr. */
function run(command: string, args: readonly string[], options: { cwd: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PGCONNECT_TIMEOUT: '10' } })
    const out: Buffer[] = []
    let err = ''
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => (err += c.toString()))
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'))
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${err}`))
    })
  })
}
