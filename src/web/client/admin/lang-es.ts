/**
 * The dashboard's words in this language as an asset of their own, admin-es.js (strings.ts says
 * why). It imports nothing else, so it carries this catalogue alone.
 */
import { es } from './strings-es.ts'

;(globalThis as Record<string, unknown>)['replenishAdminStrings'] = es
