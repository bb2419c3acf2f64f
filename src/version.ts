import pkg from '../package.json' with { type: 'json' }

/** One version, package.json's: esbuild inlines it into the bundle, so the binary needs no file. */
export const VERSION: string = pkg.version

/** What build.mjs bakes into the binary (esbuild `define`): the commit it was built from, and when. */
interface BuildStamp {
  /** `git rev-parse HEAD`, with `-dirty` when the work tree had changes; `unknown` without git. */
  readonly commit: string
  /** ISO 8601 UTC, to the second: SOURCE_DATE_EPOCH when set (reproducible builds), else the build's time. */
  readonly date: string
}
declare const REPLENISH_BUILD: BuildStamp | undefined

/** Undefined when run from source (`node --import tsx src/main.ts`): there is no build to name. */
export const BUILD: BuildStamp | undefined = typeof REPLENISH_BUILD === 'undefined' ? undefined : REPLENISH_BUILD

/** `replenish --version`: `replenish 0.3.0 (commit 1a2b3c4d5e6f, built 2026-11-25T06:00:00Z)`. */
export function versionLine(build: BuildStamp | undefined = BUILD): string {
  if (build === undefined) return `replenish ${VERSION} (run from source: no commit or build date)`
  return `replenish ${VERSION} (commit ${build.commit}, built ${build.date})`
}
