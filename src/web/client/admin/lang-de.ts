/**
 * The dashboard's words in this language as an asset of their own, admin-de.js (strings.ts says
 * why). It imports nothing else, so it carries this catalogue alone.
 */
import { de } from './strings-de.ts'

;(globalThis as Record<string, unknown>)['replenishAdminStrings'] = de
