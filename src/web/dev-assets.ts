/**
 * The pages' scripts and styles bundled in memory from src/web/client, for a server run from
 * source (`npm start`, the tests). Never part of the binary: build.mjs embeds the bundle instead
 * and marks this module external, and esbuild (a devDependency) is loaded only here, on demand.
 */
import { fileURLToPath } from 'node:url'
import { bundleClient, type AssetTexts } from './client-bundle.ts'

export async function bundleFromSource(): Promise<AssetTexts> {
  const esbuild = await import('esbuild')
  return bundleClient(fileURLToPath(new URL('../../', import.meta.url)), esbuild)
}
