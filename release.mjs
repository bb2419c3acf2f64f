// `npm run release` (after build.mjs): dist/replenish and what a user reads beside it, packed as
// dist/release/replenish-<version>-<os>-<arch>.tar.gz with a SHA256SUMS file that `sha256sum -c`
// checks. The tarball holds one directory of the same name: the executable, README.md, LICENSE,
// THIRD-PARTY-LICENSES.txt, CHANGELOG.md and docs/ (docs/operations.md: installing, upgrading and rolling back from it).
//
// `node release.mjs --out DIR` packs into DIR instead (test-binary/release.test.ts does, after
// `npm run build`). Files are stored owned by 0:0, sorted, with one date: SOURCE_DATE_EPOCH when
// set, else the binary's build time, so packing one binary twice gives the same bytes.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'

process.chdir(dirname(fileURLToPath(import.meta.url))) // paths below are the repository's
const { values } = parseArgs({ options: { out: { type: 'string', default: join('dist', 'release') } } })
const EXE = join('dist', 'replenish')
/** Beside the executable: what a user reads first, the licences, what changed, and the manual. */
const FILES = ['README.md', 'LICENSE', 'CHANGELOG.md']
/** build.mjs writes it beside the binary: the licences of Node and of the packages bundled. */
const NOTICES = join('dist', 'THIRD-PARTY-LICENSES.txt')
/** docs/ as it is, but for the scripts that regenerate its examples from the sources. */
const DOCS_LEFT_OUT = [join('docs', 'tools')]

const log = (line) => process.stderr.write(`release: ${line}\n`)
const die = (line) => {
  log(line)
  process.exit(1)
}

const { version } = JSON.parse(readFileSync('package.json', 'utf8'))
for (const file of [EXE, NOTICES]) if (!existsSync(file)) die(`${file} is missing: run \`npm run build\` first (or \`npm run release\`, which builds)`)
// The binary must be this version's: a dist/ left from another checkout would be packed under the wrong name.
const answer = spawnSync(EXE, ['--version'], { encoding: 'utf8', env: { PATH: '/nonexistent' } })
const stamp = /^replenish (\S+) \(commit (\S+), built (\S+)\)$/.exec(answer.stdout.trim())
if (answer.status !== 0 || !stamp) die(`${EXE} --version did not answer as a build does: ${JSON.stringify(answer.stdout + answer.stderr)}`)
if (stamp[1] !== version) die(`${EXE} is version ${stamp[1]}, package.json says ${version}: run \`npm run build\` again`)
if (stamp[2].endsWith('-dirty')) log(`warning: ${EXE} was built from a work tree with uncommitted changes (commit ${stamp[2]})`)

const name = `replenish-${version}-${process.platform}-${process.arch}`
const out = values.out
const stage = join(out, `.stage-${process.pid}`)
rmSync(stage, { recursive: true, force: true })
mkdirSync(join(stage, name), { recursive: true })
copyFileSync(EXE, join(stage, name, 'replenish'))
chmodSync(join(stage, name, 'replenish'), 0o755)
for (const file of FILES) copyFileSync(file, join(stage, name, file))
copyFileSync(NOTICES, join(stage, name, 'THIRD-PARTY-LICENSES.txt'))
cpSync('docs', join(stage, name, 'docs'), { recursive: true, filter: (src) => !DOCS_LEFT_OUT.includes(src) })

const epoch = /^\d+$/.test(process.env.SOURCE_DATE_EPOCH ?? '') ? Number(process.env.SOURCE_DATE_EPOCH) : Math.floor(Date.parse(stamp[3]) / 1000)
// GNU tar: a reproducible archive (no user names, no file times of this checkout).
const tar = spawnSync('tar', [
  '--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=@${epoch}`, '--mode=u+rwX,go+rX,go-w',
  '-C', stage, '-cf', '-', name,
], { maxBuffer: 1024 * 1024 * 1024 })
if (tar.error || tar.status !== 0) die(`tar failed: ${tar.error?.message ?? tar.stderr.toString()}`)
rmSync(stage, { recursive: true, force: true })

mkdirSync(out, { recursive: true })
const tarball = `${name}.tar.gz`
// gzip through zlib: no file name and no time in its header, so the bytes depend on the contents only.
const packed = gzipSync(tar.stdout)
writeFileSync(join(out, tarball), packed)
const sum = createHash('sha256').update(packed).digest('hex')
// The format `sha256sum -c SHA256SUMS` reads: the digest, two spaces, the file name.
writeFileSync(join(out, 'SHA256SUMS'), `${sum}  ${tarball}\n`)
log(`${join(out, tarball)} (${(statSync(join(out, tarball)).size / 1_048_576).toFixed(1)} MiB; commit ${stamp[2]}, built ${stamp[3]})`)
log(`${join(out, 'SHA256SUMS')}: ${sum}`)
