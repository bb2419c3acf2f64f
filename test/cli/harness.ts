/**
 * Runs the CLI the way the binary does, in-process (src/cli/main.ts returns the exit status
 * instead of exiting) or as a real process (for what only a process has: signals, cwd, exit).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { main } from '../../src/cli/main.ts'
import { newTestLocation } from '../helpers/store.ts'

export const MAIN_TS = fileURLToPath(new URL('../../src/main.ts', import.meta.url))
const TSX = import.meta.resolve('tsx')

export interface CliRun {
  readonly status: number
  readonly stdout: string[]
  readonly stderr: string[]
}

/** Lines the CLI printed (the access log hands over several lines at once: split them). */
const lines = (chunks: string[]): string[] => chunks.flatMap((c) => c.split('\n'))

/** The stop of each `serve` a test started (startServe), so that its files can go after it has stopped. */
const servesOf = new WeakMap<TestContext, (() => Promise<number>)[]>()

/**
 * A temporary directory removed after the test, once every `serve` the test started has stopped:
 * `after` hooks run in the order they were added, so this one (added first) would otherwise
 * remove the directory while a server still writes its database there (ENOTEMPTY).
 */
export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-cli-'))
  t.after(async () => {
    await Promise.all((servesOf.get(t) ?? []).map((stop) => stop()))
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
  })
  return dir
}

/**
 * A fresh database of the test backend for REPLENISH_DB (a SQLite file, or a PostgreSQL URL of a
 * new schema), removed after the test: for tests of behaviour, not of files.
 */
export async function testDb(t: TestContext): Promise<string> {
  const at = await newTestLocation()
  t.after(() => at.remove())
  return at.location
}

/**
 * `testDb` made and migrated by `replenish migrate`: every command but `serve` and `migrate`
 * refuses a SQLite file that does not exist (issue 25).
 */
export async function migratedDb(t: TestContext): Promise<string> {
  const db = await testDb(t)
  const run = await runCli(['migrate'], { REPLENISH_DB: db })
  if (run.status !== 0) throw new Error(`migrate: ${run.stderr.join('\n')}`)
  return db
}

/** `replenish ARGS` in-process, with exactly this environment (process.env is not read). */
export async function runCli(argv: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const out: string[] = []
  const err: string[] = []
  const status = await main(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l), stopSignal: () => new Promise(() => {}) })
  return { status, stdout: lines(out), stderr: lines(err) }
}

export interface ServeRun {
  readonly url: string
  readonly stdout: string[]
  readonly stderr: string[]
  /** Delivers "SIGTERM" to serve and resolves with its exit status once it has drained. */
  stop(): Promise<number>
}

/** `replenish serve` in-process on port 0; `stop()` plays the part of SIGTERM. */
export async function startServe(t: TestContext, env: Record<string, string>, argv: string[] = []): Promise<ServeRun> {
  const out: string[] = []
  const err: string[] = []
  let signal!: (name: string) => void
  const stopped = new Promise<string>((resolve) => (signal = resolve))
  let listening!: (url: string) => void
  const ready = new Promise<string>((resolve) => (listening = resolve))
  const finished = main(['serve', ...argv], { REPLENISH_PORT: '0', REPLENISH_PROCESS_EVERY: '0', ...env }, {
    out: (l) => {
      out.push(l)
      const m = /^replenish listening on (http:\/\/\S+)$/.exec(l)
      if (m) listening(m[1] as string)
    },
    err: (l) => err.push(l),
    stopSignal: () => stopped,
  })
  const url = await Promise.race([ready, finished.then((s) => { throw new Error(`serve exited with ${s}: ${err.join('\n')}`) })])
  let done: Promise<number> | undefined
  const stop = (): Promise<number> => (done ??= (signal('SIGTERM'), finished))
  t.after(stop)
  servesOf.set(t, [...(servesOf.get(t) ?? []), stop])
  return {
    url,
    get stdout() { return lines(out) },
    get stderr() { return lines(err) },
    stop,
  }
}

export interface Child {
  readonly pid: number
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the first line of stdout matching `re`. */
  waitFor(re: RegExp): Promise<RegExpExecArray>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  kill(signal: NodeJS.Signals): void
}

/** `replenish ARGS` as a real process on node_modules' Node (through tsx), with only `env`. */
export function spawnCli(t: TestContext, args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Child {
  return spawnProcess(t, process.execPath, ['--import', TSX, MAIN_TS, ...args], options)
}

/**
 * `replenish ARGS` run to its end as a real process: for a command that writes to a SQLite file an
 * in-process `serve` of the test holds. In this process SQLite's busy wait would block serve's
 * event loop, so a write batch serve had open (an API key's last use, say) could never commit, and
 * the command would fail after its 5 s wait (seen in CI on a loaded machine). Two processes wait
 * for each other as they do in production.
 */
export async function runCliBeside(t: TestContext, args: string[], env: Record<string, string>): Promise<CliRun> {
  const child = spawnCli(t, args, { env })
  const { code } = await child.exited
  const printed = (text: string): string[] => (text === '' ? [] : lines([text.replace(/\n$/, '')]))
  return { status: code ?? -1, stdout: printed(child.stdout()), stderr: printed(child.stderr()) }
}

export function spawnProcess(t: TestContext, command: string, args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Child {
  const child = spawn(command, args, { cwd: options.cwd, env: { PATH: process.env['PATH'] ?? '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = []
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d
    for (const w of [...waiters]) {
      const m = w.re.exec(out)
      if (m) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(m)
      }
    }
  })
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return {
    pid: child.pid as number,
    stdout: () => out,
    stderr: () => err,
    waitFor: (re) =>
      new Promise((resolve, reject) => {
        const m = re.exec(out)
        if (m) return resolve(m)
        waiters.push({ re, resolve })
        void exited.then(({ code }) => reject(new Error(`exited with ${code} before printing ${re}: ${err}`)))
      }),
    exited,
    kill: (signal) => child.kill(signal),
  }
}
