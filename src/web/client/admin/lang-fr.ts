/**
 * The dashboard's words in this language as an asset of their own, admin-fr.js (strings.ts says
 * why). It imports nothing else, so it carries this catalogue alone.
 */
import { fr } from './strings-fr.ts'

;(globalThis as Record<string, unknown>)['replenishAdminStrings'] = fr
