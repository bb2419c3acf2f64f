import pkg from '../package.json' with { type: 'json' }

/** One version, package.json's: esbuild inlines it into the bundle, so the binary needs no file. */
export const VERSION: string = pkg.version
