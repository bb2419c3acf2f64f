/**
 * The dashboard's own words (`admin.*` keys) in the four languages of the API (C4), added to the
 * shared catalogue of lib/i18n.ts (states, units, event names, address fields, common words).
 * The language is the page's `<html lang>`, chosen by the server from Accept-Language as the API
 * chooses it; the API's own messages (422 fields, 401/403) arrive already in that language.
 */
import { translator, type Catalogue, type Language, type SharedKey, type Translate } from '../lib/i18n.ts'
import { en, type AdminKey } from './strings-en.ts'
import { es } from './strings-es.ts'
import { fr } from './strings-fr.ts'
import { de } from './strings-de.ts'

export type { AdminKey }

export const ADMIN_STRINGS: Readonly<Record<Language, Catalogue<AdminKey>>> = { en, es, fr, de }

export type Key = SharedKey | AdminKey

let translate: Translate<Key> = translator('en', ADMIN_STRINGS)
let language: Language = 'en'

/** Set once by main.ts from the page. */
export function useLanguage(lang: Language): void {
  language = lang
  translate = translator(lang, ADMIN_STRINGS)
}

export const lang = (): Language => language

export const t: Translate<Key> = (key, vars) => translate(key, vars)
