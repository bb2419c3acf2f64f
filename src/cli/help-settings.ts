/**
 * Which help page documents each setting of src/config.ts (its flag and REPLENISH_* variable):
 * exactly one. `overview` (`replenish --help`) holds what every command reads; a command's page
 * (`replenish serve --help`) what that command uses. The line itself (flag, variable, default,
 * text) is rendered from OPTIONS; the order on a page is OPTIONS' order.
 *
 * Adding a setting to OPTIONS is one line here too: test/cli/help.test.ts fails, naming it, until
 * it is.
 */
export type HelpPage = 'overview' | 'serve' | 'process' | 'migrate' | 'backup' | 'copy' | 'import' | 'admin-tokens' | 'users' | 'keys' | 'mail-preview'

export const SETTINGS_PAGE: Readonly<Record<string, HelpPage>> = {
  // Where the data is and what day it is: every command.
  REPLENISH_DB: 'overview',
  REPLENISH_DB_POOL: 'overview',
  REPLENISH_DB_STATEMENT_TIMEOUT_MS: 'overview',
  REPLENISH_SYNCHRONOUS: 'overview',
  REPLENISH_TIME_ZONE: 'overview',
  REPLENISH_TODAY: 'overview',
  // The server: listening, the APIs' rules and limits, webhooks, the console.
  REPLENISH_HOST: 'serve',
  REPLENISH_PORT: 'serve',
  REPLENISH_ADMIN_TOKEN: 'serve',
  REPLENISH_CURRENCY: 'serve',
  REPLENISH_MAX_SUCCESSIVE_SKIPS: 'serve',
  REPLENISH_MAX_TOTAL_SKIPS: 'serve',
  REPLENISH_CANCELLATION_NOTICE_DAYS: 'serve',
  REPLENISH_REPROCESSING_INTERVAL_HOURS: 'serve',
  REPLENISH_MAX_REPROCESSING_DAYS: 'serve',
  REPLENISH_PROCESS_EVERY: 'serve',
  REPLENISH_MAX_BODY_BYTES: 'serve',
  REPLENISH_METRICS_PUBLIC: 'serve',
  REPLENISH_RATE_LIMIT: 'serve',
  REPLENISH_RATE_BURST: 'serve',
  REPLENISH_AUTH_FAILURE_LIMIT: 'serve',
  REPLENISH_HEADERS_TIMEOUT_MS: 'serve',
  REPLENISH_REQUEST_TIMEOUT_MS: 'serve',
  REPLENISH_KEEP_ALIVE_TIMEOUT_MS: 'serve',
  REPLENISH_READ_CACHE_MB: 'serve',
  REPLENISH_WEBHOOK_RETRY_BASE_SECONDS: 'serve',
  REPLENISH_EVENT_RETENTION_DAYS: 'serve',
  REPLENISH_LOG: 'serve',
  REPLENISH_TRUST_PROXY: 'serve',
  REPLENISH_CORS_ORIGINS: 'serve',
  REPLENISH_SHOP_NAME: 'serve',
  REPLENISH_SHOP_LOGO_URL: 'serve',
  REPLENISH_SHOP_ACCENT: 'serve',
  REPLENISH_PUBLIC_URL: 'serve',
  REPLENISH_SHOP_URL: 'serve',
  // Customers' mails (C17, docs/email.md): serve sends them; process queues those of its events.
  REPLENISH_UPCOMING_DAYS: 'serve',
  REPLENISH_SMTP_URL: 'serve',
  REPLENISH_SMTP_TLS_INSECURE: 'serve',
  REPLENISH_SMTP_CA_FILE: 'serve',
  REPLENISH_MAIL_FROM: 'serve',
  REPLENISH_MAIL_LINK_HOURS: 'serve',
  REPLENISH_MAIL_RETRY_BASE_SECONDS: 'serve',
  REPLENISH_DEFAULT_LOCALE: 'serve',
}
