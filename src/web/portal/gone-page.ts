import type { Config } from '../../config.ts'
import type { Reply } from '../../http/types.ts'
import type { Language } from '../../domain/messages.ts'
import type { AssetMap } from '../assets.ts'
import { escapeHtml, renderPage } from '../shell.ts'
import { translator } from '../client/lib/i18n.ts'

/**
 * 410 for a portal link that is unknown, used or expired (C14): one page for all three, in the
 * browser's language, styled, and never JSON. It leads back (C18) to where the link would have:
 * its `return_url`, else REPLENISH_SHOP_URL; with neither it offers no link. A guesser learns
 * nothing from it (an unknown token has no return_url, so it gets the shop's page like any other).
 */
export function gonePage(language: Language, config: Config, assets: AssetMap, returnUrl: string | null): Reply {
  const t = translator(language)
  const back = returnUrl ?? config.shopUrl
  const link = back === undefined ? '' : `<p><a class="button" href="${escapeHtml(back)}">${escapeHtml(t('gone.back_to_shop'))}</a></p>`
  const main = `<section class="card gone"><h1>${escapeHtml(t('gone.title'))}</h1><p>${escapeHtml(t('gone.body'))}</p>${link}</section>`
  return renderPage({ app: 'portal', language, config, assets, title: t('gone.title'), main, script: false, status: 410 })
}
