/**
 * The process: argv and environment in, an exit status out. The only file that touches signals
 * and `process.exit` (STYLE 10); the CLI itself is src/cli/main.ts.
 */
import { main } from './cli/main.ts'

const write = (stream: NodeJS.WriteStream) => (line: string): void => void stream.write(line + '\n')

function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    // `once`: a second signal while draining gets Node's default action and stops the process at once.
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve(sig))
  })
}

// No top-level await: the bundle is CommonJS (a SEA runs CommonJS).
void main(process.argv.slice(2), process.env, { out: write(process.stdout), err: write(process.stderr), stopSignal }).then((status) => {
  // stdout may be an asynchronous pipe (macOS): exit once everything written has left.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(status)))
})
