/**
 * How the console's pages are bundled (C14, docs/console.md): every `src/web/client/<app>/main.ts`
 * becomes `/assets/<app>.js`, and the CSS it imports `/assets/<app>.css`. One definition for both
 * users: build.mjs embeds the result in the binary, and src/web/dev-assets.ts bundles it in memory
 * when the server runs from source. esbuild is passed in, never imported here, so that the
 * server's own bundle does not carry it.
 */
import { existsSync, readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import type * as Esbuild from 'esbuild'

export const CLIENT_DIR = join('src', 'web', 'client')

/** `<app>.js` / `<app>.css` → its text. */
export type AssetTexts = Record<string, string>

export function clientApps(root: string): string[] {
  return readdirSync(join(root, CLIENT_DIR), { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'lib' && existsSync(join(root, CLIENT_DIR, d.name, 'main.ts')))
    .map((d) => d.name)
    .sort()
}

/**
 * An app's words in one language as an asset of their own: `<app>/lang-<xx>.ts` becomes
 * `<app>-<xx>.js`, which the shell loads before the app's script on a page in that language.
 */
export function languageEntries(root: string, app: string): [name: string, file: string][] {
  return readdirSync(join(root, CLIENT_DIR, app))
    .flatMap((file) => /^lang-([a-z]{2})\.ts$/.exec(file)?.slice(1, 2) ?? [])
    .sort()
    .map((language) => [`${app}-${language}`, join(CLIENT_DIR, app, `lang-${language}.ts`)])
}

export async function bundleClient(root: string, esbuild: typeof Esbuild): Promise<AssetTexts> {
  const apps = clientApps(root)
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(apps.flatMap((app) => [[app, join(CLIENT_DIR, app, 'main.ts')], ...languageEntries(root, app)])),
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    // Browsers of the last few years: <dialog>, CSS nesting is not used, optional chaining is.
    target: ['chrome111', 'firefox115', 'safari16'],
    legalComments: 'none',
    charset: 'utf8',
    write: false,
    outdir: 'assets',
    logLevel: 'silent',
  })
  const out: AssetTexts = {}
  for (const file of result.outputFiles) out[basename(file.path)] = file.text
  return out
}
