/**
 * The browser tests' harness (C14, docs/console.md): a real server (test/helpers/server.ts, whose
 * routes include the web console), Debian's chromium driven headless by playwright-core, axe-core
 * injected for accessibility, and screenshots into docs/console/. Run with `npm run test:browser`.
 *
 * Every page a test opens reports its script errors and CSP refusals (`problems`): a page that
 * breaks the policy fails its test, so the policy is tested in the browser, not only as a header.
 */
import type { TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts'

export { ADMIN_TOKEN }
export type { Browser, BrowserContext, Page, TestServer }

export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const SCREENSHOTS = join(ROOT, 'docs', 'console')
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** The day the harness's servers take as today (REPLENISH_TODAY): dates on screenshots stay put. */
export const TODAY = '2026-11-25'

export interface Harness {
  readonly server: TestServer
  readonly browser: Browser
  /** A fresh browser context (its own cookies) and page, closed after the test. */
  newPage(options?: PageOptions): Promise<TrackedPage>
}

export interface PageOptions {
  /** Sets Accept-Language and navigator.language (default en-US). */
  readonly locale?: string
  /** Default 1280 × 800; use 360 wide to check the narrow layout. */
  readonly viewport?: { width: number; height: number }
}

export interface TrackedPage {
  readonly page: Page
  readonly context: BrowserContext
  /** Uncaught script errors and CSP refusals seen so far on this page. */
  readonly problems: string[]
}

/** One server (with `env`, as startTestServer takes it) and one chromium per test; both closed after it. */
export async function startHarness(t: TestContext, env: Record<string, string> = {}): Promise<Harness> {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, ...env })
  const browser = await launchChromium()
  t.after(() => browser.close())
  return {
    server,
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({ locale: options.locale ?? 'en-US', viewport: options.viewport ?? { width: 1280, height: 800 } })
      t.after(() => context.close())
      const page = await context.newPage()
      // Playwright's default of 30 s would hide a hang for half a minute: pages here answer in ms.
      page.setDefaultTimeout(10_000)
      const problems: string[] = []
      page.on('pageerror', (err) => problems.push(`script error: ${err.message}`))
      page.on('console', (msg) => {
        if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) problems.push(`CSP: ${msg.text()}`)
      })
      return { page, context, problems }
    },
  }
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`)
  }
  // playwright-core never downloads a browser: it drives the system's one.
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 })
}

export interface AxeResult {
  readonly violations: readonly { id: string; impact: string | null; help: string; nodes: readonly { target: unknown }[] }[]
}

/**
 * Runs axe-core on the page as it is now and fails on any serious or critical violation,
 * naming each with its elements. Answers every violation (minor and moderate ones included),
 * for the report. axe is evaluated through the DevTools protocol, which the page's CSP does not
 * govern (a `<script>` tag added to the page would be refused by it, as it should be).
 */
export async function checkAccessibility(page: Page, label: string): Promise<AxeResult> {
  await page.evaluate(AXE_SOURCE)
  const result = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<AxeResult> } }).axe
    const page = (globalThis as unknown as { document: unknown }).document // the browser's, where this runs
    const r = await axe.run(page, { resultTypes: ['violations'] })
    return { violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })) }
  })) as AxeResult
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  assert.deepEqual(bad.map((v) => `${v.impact} ${v.id}: ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`), [], `axe on ${label}`)
  return result
}

/**
 * Saves a full-page screenshot as docs/console/<name>.png (the README links them); `fullPage:
 * false` takes the screen only (a modal dialog's backdrop covers only the screen).
 */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, `${name}.png`)
  await page.screenshot({ path, fullPage: options.fullPage ?? true })
  return path
}

/** A one-time portal link for the user, made through the admin API as a shop's backend would. */
export async function portalLink(server: TestServer, userId: number, returnUrl?: string): Promise<string> {
  const res = await server.request('POST', `/admin/api/v1/users/${userId}/portal_sessions`, {
    key: ADMIN_TOKEN,
    json: { portal_session: returnUrl === undefined ? {} : { return_url: returnUrl } },
  })
  assert.equal(res.status, 201, res.text)
  return res.body.url as string
}

/**
 * A second web server on another port of 127.0.0.1: another origin (a page of another site, as far
 * as CORS and CSRF go), serving one HTML page at `/`. Closed after the test.
 */
export async function startOtherOrigin(t: TestContext, html: string): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
