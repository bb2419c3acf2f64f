import { isLanguage, type Language } from './i18n.ts'

/** What the server put on the page (shell.ts): the language in `<html lang>`, the branding in `<body data-*>`. */
export interface PageContext {
  readonly language: Language
  readonly shopName: string
  readonly shopLogoUrl: string | undefined
  readonly main: HTMLElement
  readonly nav: HTMLElement
}

export function pageContext(): PageContext {
  const lang = document.documentElement.lang
  const data = document.body.dataset
  const main = document.getElementById('main')
  const nav = document.getElementById('shop-nav')
  if (!main || !nav) throw new Error('the page has no #main or #shop-nav: it was not served by shell.ts')
  return {
    language: isLanguage(lang) ? lang : 'en',
    shopName: data['shopName'] ?? '',
    shopLogoUrl: data['shopLogoUrl'] || undefined,
    main,
    nav,
  }
}
