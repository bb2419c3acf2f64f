/**
 * The dashboard's own words (`admin.*` keys) in the four languages of the API (C4), added to the
 * shared catalogue of lib/i18n.ts (states, units, event names, address fields, common words).
 * The language is the page's `<html lang>`, chosen by the server from Accept-Language as the API
 * chooses it; the API's own messages (422 fields, 401/403) arrive already in that language.
 *
 * English is in admin.js; each other language is an asset of its own, `admin-<lang>.js`
 * (lang-<lang>.ts), which the page loads just before admin.js (shell.ts), so a page carries the
 * words of its language only. Without it (it failed to load) the page speaks English.
 */
import { translator, type Catalogue, type Language, type SharedKey, type Translate } from '../lib/i18n.ts'
import { en, type AdminKey } from './strings-en.ts'

export type { AdminKey }

export type Key = SharedKey | AdminKey

/** Where admin-<lang>.js (lang-<lang>.ts) leaves its catalogue for this script. */
const GLOBAL = 'replenishAdminStrings'

let translate: Translate<Key> = translator('en', { en, es: en, fr: en, de: en })
let language: Language = 'en'

/** Set once by main.ts from the page. */
export function useLanguage(lang: Language): void {
  const given = (globalThis as Record<string, unknown>)[GLOBAL] as Catalogue<AdminKey> | undefined
  const own = lang === 'en' || given === undefined ? en : given
  language = own === en ? 'en' : lang
  translate = translator(language, { en, es: own, fr: own, de: own })
}

export const lang = (): Language => language

export const t: Translate<Key> = (key, vars) => translate(key, vars)
