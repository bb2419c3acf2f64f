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
import { spawn, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
  /** More `-c name=value` settings for the server (`ssl`, `ssl_cert_file`, …). */
  readonly settings?: Readonly<Record<string, string>>
  /**
   * The superuser's password: the cluster then asks every connection for it (SCRAM) instead of
   * trusting it, and psql gives it.
   */
  readonly password?: string
}

/** The throwaway cluster, for a test that stops, starts or freezes it under a running server. */
export interface ThrowawayCluster extends ThrowawayPostgres {
  readonly url: string
  /** Its data directory's parent, a temporary directory removed by stop(). */
  readonly dir: string
  /** Stops the server and removes its files. */
  stop(): Promise<void>
  /** Stops the server only (`fast`: SIGINT; `immediate`: SIGQUIT, a crash and recovery), keeping its files. */
  halt(mode: 'fast' | 'immediate'): Promise<void>
  /** Starts it again on the same port and files, once halted. */
  start(): Promise<void>
  /** SIGSTOP (true) or SIGCONT (false) to the postmaster and every backend: a frozen server. */
  freeze(frozen: boolean): void
}

/**
 * The same throwaway cluster, stopped by the caller (test/run.ts runs the suite on it). Commits
 * report `synchronous_commit = on`, as the product requires by default, while `fsync=off` keeps
 * them from waiting for the disk: nothing here needs to survive a crash of the machine.
 */
export async function startPostgresCluster(options: ClusterOptions = {}): Promise<ThrowawayCluster> {
  const bin = postgresBinDir()
  const dir = mkdtempSync(join(tmpdir(), 'replenish-pg-'))
  const asRoot = process.getuid?.() === 0
  let child: ChildProcess | undefined
  let exited: Promise<unknown> = Promise.resolve()
  const halt = async (mode: 'fast' | 'immediate'): Promise<void> => {
    const running = child
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    // A frozen server cannot stop: let it go on first.
    signalCluster(running.pid as number, 'SIGCONT')
    running.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT')
    const kill = setTimeout(() => running.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(kill)
  }
  // One function, so the order holds: the server stops, then its directory goes.
  const stop = async (): Promise<void> => {
    await halt('fast')
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    if (asRoot) chownSync(dir, NOBODY, NOBODY)
    const server = (command: string, args: readonly string[]): [string, string[]] =>
      asRoot ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', join(bin, command), ...args]] : [join(bin, command), [...args]]

    const data = join(dir, 'data')
    const auth = ['--auth=trust']
    if (options.password !== undefined) {
      const pwfile = join(dir, 'pwfile')
      writeFileSync(pwfile, options.password + '\n', { mode: 0o644 })
      auth.splice(0, 1, '--auth=scram-sha-256', `--pwfile=${pwfile}`)
    }
    await run(...server('initdb', ['-D', data, '-U', 'postgres', ...auth, '--no-sync', '--encoding=UTF8', '--locale=C']), { cwd: dir })
    const port = await freePort()
    const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`])
    const [command, args] = server('postgres', [
      '-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
      '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', `max_connections=${options.maxConnections ?? 20}`, ...settings,
    ])
    const start = async (): Promise<void> => {
      const started = spawn(command, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
      child = started
      let log = ''
      exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)))
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`postgres did not start within 60 s:\n${log}`)), 60_000)
        started.stderr.on('data', (chunk: Buffer) => {
          log += chunk.toString()
          if (log.includes('database system is ready to accept connections')) {
            clearTimeout(timer)
            resolve()
          }
        })
        void exited.then((code) => {
          clearTimeout(timer)
          reject(new Error(`postgres exited (${String(code)}) before it was ready:\n${log}`))
        })
      })
    }
    await start()
    const psqlEnv: Record<string, string> = options.password === undefined ? {} : { PGPASSWORD: options.password }
    return {
      port,
      dir,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop,
      halt,
      start,
      freeze: (frozen) => {
        if (child?.pid !== undefined) signalCluster(child.pid, frozen ? 'SIGSTOP' : 'SIGCONT')
      },
      psql: (database, extra) =>
        run(existsSync(join(bin, 'psql')) ? join(bin, 'psql') : 'psql', ['-X', '-q', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', ...extra], { cwd: dir, env: psqlEnv }),
    }
  } catch (err) {
    await stop()
    throw err
  }
}

/**
 * A signal to the postmaster, then to each of its children (backends and helpers: Linux's /proc
 * names their parent), so that a SIGSTOP freezes the whole server and forks nothing new meanwhile.
 */
function signalCluster(postmaster: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
  process.kill(postmaster, signal)
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // it ended meanwhile
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (ppid === postmaster) {
      try {
        process.kill(Number(entry), signal)
      } catch {
        // it ended meanwhile
      }
    }
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
function run(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PGCONNECT_TIMEOUT: '10', ...options.env } })
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
