/**
 * The headers every page of the console carries (C14, docs/console.md). The policy allows only
 * this server's scripts and styles, never inline ones, so an injected `<script>` or `onclick`
 * cannot run; images may also come from https: (the shop's logo) and data: URLs.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ')

export const HTML_TYPE = 'text/html; charset=utf-8'

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  // A page is a few hundred bytes naming the current assets' hashes: never kept, never stale.
  'cache-control': 'no-store',
}
