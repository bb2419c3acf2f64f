import type { Config } from '../../config.ts'
import type { Reply } from '../../http/types.ts'
import type { Language } from '../../domain/messages.ts'
import type { AssetMap } from '../assets.ts'
import { escapeHtml, renderPage } from '../shell.ts'
import { translator } from '../client/lib/i18n.ts'

/**
 * 410 for a portal link that is unknown, used or expired (C14): one page for all three, so the
 * answer tells a guesser nothing, in the browser's language, styled, and never JSON.
 */
export function gonePage(language: Language, config: Config, assets: AssetMap): Reply {
  const t = translator(language)
  const main = `<section class="card gone"><h1>${escapeHtml(t('gone.title'))}</h1><p>${escapeHtml(t('gone.body'))}</p></section>`
  return renderPage({ app: 'portal', language, config, assets, title: t('gone.title'), main, script: false, status: 410 })
}
