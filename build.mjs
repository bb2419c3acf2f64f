// `npm run build`: src/main.ts → one CommonJS bundle → a Node single-executable application at
// dist/replenish (C12). Inside a SEA, `require` loads only built-in modules, so everything of ours
// is bundled; node:sqlite, node:http and the rest come from the embedded Node itself.
// https://nodejs.org/api/single-executable-applications.html
import * as esbuild from 'esbuild'
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundleClient } from './src/web/client-bundle.ts'

process.chdir(dirname(fileURLToPath(import.meta.url))) // paths below are the repository's
const OUT = 'dist'
const BUNDLE = join(OUT, 'replenish.cjs')
const BLOB = join(OUT, 'replenish.blob')
const SEA_CONFIG = join(OUT, 'sea-config.json')
const EXE = join(OUT, process.platform === 'win32' ? 'replenish.exe' : 'replenish')
// The fuse Node looks for to know a blob was injected (documented in the SEA page).
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

const started = Date.now()
const log = (line) => process.stderr.write(`build: ${line}\n`)
const mb = (file) => `${(statSync(file).size / 1_048_576).toFixed(1)} MiB`

// The blob is made by the very binary it is injected into: the two must be the same Node version.
// npm scripts put node_modules/.bin first on PATH, so `npm run build` runs on the pinned Node 24.
const major = Number(process.versions.node.split('.')[0])
if (major < 24) {
  log(`Node ${process.versions.node} is too old: run \`npm run build\` (it uses node_modules' Node 24)`)
  process.exit(1)
}

rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })

const { version } = JSON.parse(readFileSync('package.json', 'utf8'))
const stamp = buildStamp()
log(`version ${version}, commit ${stamp.commit}, built ${stamp.date}`)
// The web console's scripts and styles first (docs/console.md): the server bundle carries them as
// one constant, so the binary serves them with no files beside it.
const assets = await bundleClient(process.cwd(), esbuild)
log(`console assets ${Object.entries(assets).map(([name, text]) => `${name} ${(Buffer.byteLength(text) / 1024).toFixed(1)} KiB`).join(', ')}`)
const built = await esbuild.build({
  absWorkingDir: process.cwd(),
  metafile: true, // which packages are inside: their licences go beside the binary
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  minify: true,
  legalComments: 'none',
  outfile: BUNDLE,
  logLevel: 'warning',
  // `replenish --version` names the commit and the build's date (src/version.ts).
  define: { REPLENISH_EMBEDDED_ASSETS: JSON.stringify(assets), REPLENISH_BUILD: JSON.stringify(stamp) },
  // Only a server run from source bundles the console itself: esbuild stays out of the binary.
  // pg (the PostgreSQL driver, C15) is bundled; its optional native binding (libpq) is never used
  // and never installed: pg only requires it when asked to (`pg.native`), which we never do.
  external: ['esbuild', 'pg-native'],
  plugins: [{
    name: 'source-only-modules',
    setup(b) {
      b.onResolve({ filter: /\/dev-assets\.ts$/ }, (args) => ({ path: args.path, external: true }))
    },
  }],
})
log(`bundle ${BUNDLE} (${(statSync(BUNDLE).size / 1024).toFixed(0)} KiB)`)
writeThirdPartyLicences(Object.keys(built.metafile.inputs))

writeFileSync(SEA_CONFIG, JSON.stringify({
  main: BUNDLE,
  output: BLOB,
  disableExperimentalSEAWarning: true,
  // The code cache spares V8 compiling the bundle at start: it works, though with a bundle of about
  // half a megabyte the gain is within noise (docs/operations.md).
  // No startup snapshot: it would need the bundle written for the snapshot API, for little gain here.
  useCodeCache: true,
  useSnapshot: false,
  // A smaller young generation, and an old generation V8 collects at 96 MB instead of letting it
  // grow to ~70 MB of garbage first, keep the server's peak RSS down under load (156 → 126 MB)
  // at no measured cost in throughput (docs/performance.md).
  execArgv: ['--max-semi-space-size=4', '--max-old-space-size=96'],
  // Runtime flags come from `replenish --node-options="…" <command>` (after these, so they win),
  // never from a NODE_OPTIONS left in the environment for some other Node program.
  execArgvExtension: 'cli',
}, null, 2))
run(process.execPath, ['--experimental-sea-config', SEA_CONFIG])

copyFileSync(process.execPath, EXE)
chmodSync(EXE, 0o755)
if (process.platform === 'darwin') run('codesign', ['--remove-signature', EXE])
// The node binary ships its symbol and debug tables; the program does not need them. Strip before
// injecting: the blob lives in a note/section that stripping afterwards could drop.
if (process.platform === 'linux') {
  const strip = spawnSync('strip', ['--strip-all', EXE], { stdio: 'inherit' })
  if (strip.error || strip.status !== 0) log('strip not available or failed: keeping the symbols')
}

// postject's CLI in a child process rather than its API in ours, only to drop a line that LIEF
// prints a dozen times for any node binary, stripped or not, and that means nothing for us:
// "warning: Can't find string offset for section name '.note…'".
const injected = spawnSync(process.execPath, [
  'node_modules/postject/dist/cli.js', EXE, 'NODE_SEA_BLOB', BLOB, '--sentinel-fuse', FUSE,
  ...(process.platform === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : []),
], { encoding: 'utf8' })
const noise = /^warning: Can't find string offset for section name '\.note[^']*'$/
for (const line of `${injected.stdout}${injected.stderr}`.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
  if (line && !noise.test(line)) log(`postject: ${line}`)
}
if (injected.status !== 0) {
  log(`postject failed with status ${injected.status}`)
  process.exit(1)
}
if (process.platform === 'darwin') run('codesign', ['--sign', '-', EXE])

// A build that does not run is no build: the binary must answer --version without any node on PATH.
const check = spawnSync(EXE, ['--version'], { encoding: 'utf8', env: { PATH: '/nonexistent' } })
if (check.status !== 0 || check.stdout.trim() !== `replenish ${version} (commit ${stamp.commit}, built ${stamp.date})`) {
  log(`the built binary does not run: status ${check.status}, stdout ${JSON.stringify(check.stdout)}, stderr ${JSON.stringify(check.stderr)}`)
  process.exit(1)
}
rmSync(BLOB)
rmSync(SEA_CONFIG)
log(`${EXE} ${version} (${mb(EXE)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`)

/**
 * The commit (12 hex digits, `-dirty` when the work tree has changes git tracks) and the date of
 * the build, to the second in UTC. SOURCE_DATE_EPOCH (https://reproducible-builds.org) fixes the
 * date, so two builds of one commit can be compared byte for byte. Without git (a copy of the
 * sources without .git) the commit is `unknown`.
 */
function buildStamp() {
  const git = (...args) => spawnSync('git', args, { encoding: 'utf8' })
  const head = git('rev-parse', '--short=12', 'HEAD')
  let commit = 'unknown'
  if (head.status === 0) {
    const dirty = git('status', '--porcelain', '--untracked-files=no').stdout.trim() !== ''
    commit = `${head.stdout.trim()}${dirty ? '-dirty' : ''}`
  }
  const epoch = process.env.SOURCE_DATE_EPOCH
  const at = epoch !== undefined && /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000) : new Date()
  return { commit, date: at.toISOString().replace(/\.\d{3}Z$/, 'Z') }
}

/**
 * dist/THIRD-PARTY-LICENSES.txt: the licence of Node (the binary is Node with our code inside)
 * and of every npm package the bundle holds (pg and its own dependencies), whose notices their
 * licences ask to travel with every copy. esbuild drops legal comments from the bundle
 * (`legalComments: 'none'`), so this file is where they are; `npm run release` ships it.
 */
function writeThirdPartyLicences(inputs) {
  const packages = new Map()
  for (const input of inputs) {
    const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (m) packages.set(m[1], input.slice(0, m.index + m[0].length))
  }
  // A LICENSE file, or else the README's License section (pgpass, pg-types ship no file).
  const licenceOf = (dir) => {
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f))
    if (file !== undefined) return readFileSync(join(dir, file), 'utf8').trim()
    const readme = readdirSync(dir).find((f) => /^readme(\.md)?$/i.test(f))
    const section = readme && /^#+ *licen[cs]e[^\n]*\n([^]*?)(?=^#|(?![^]))/im.exec(readFileSync(join(dir, readme), 'utf8'))
    return section ? section[1].trim() || undefined : undefined
  }
  const nodeDir = join(dirname(process.execPath), '..', 'node_modules', `node-${process.platform}-${process.arch}`)
  const nodeLicence = existsSync(nodeDir) ? licenceOf(nodeDir) : undefined
  if (nodeLicence === undefined) log(`warning: Node's LICENSE not found beside ${process.execPath}: THIRD-PARTY-LICENSES.txt points to it instead`)
  const sections = [
    ['Node.js ' + process.version, nodeLicence ?? 'https://github.com/nodejs/node/blob/main/LICENSE'],
    ...[...packages].sort(([a], [b]) => a.localeCompare(b)).map(([name, dir]) => {
      const { version: v, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      const text = licenceOf(dir)
      if (text === undefined) log(`warning: ${name} has no licence file; its package.json says ${license}`)
      return [`${name} ${v} (${license})`, text ?? `License: ${license} (no licence file in the package)`]
    }),
  ]
  writeFileSync(join(OUT, 'THIRD-PARTY-LICENSES.txt'), [
    'replenish is MIT-licensed (LICENSE). The executable also holds the software below, under these licences.',
    ...sections.map(([title, text]) => `\n${'='.repeat(78)}\n${title}\n${'='.repeat(78)}\n\n${text}\n`),
  ].join('\n'))
  log(`licences of Node and ${packages.size} bundled packages in ${join(OUT, 'THIRD-PARTY-LICENSES.txt')}`)
}

function run(command, args) {
  const r = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] })
  if (r.error || r.status !== 0) {
    log(`${command} ${args.join(' ')} failed${r.error ? `: ${r.error.message}` : ` with status ${r.status}`}`)
    process.exit(1)
  }
}
