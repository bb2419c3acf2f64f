import { FieldErrors } from '../field-errors.ts'
import type { Language } from '../messages.ts'

/**
 * The import's own messages, beside C4's (messages.ts), in the same four languages: the 422 of
 * `POST /imports` is localised like every other (C4), the CLI prints English. Keys are permanent.
 */
export const IMPORT_MESSAGES = {
  line: { en: 'line %{count}', es: 'línea %{count}', fr: 'ligne %{count}', de: 'Zeile %{count}' },
  empty_import: {
    en: 'The import is empty: send one JSON object per line (application/x-ndjson)',
    es: 'La importación está vacía: envíe un objeto JSON por línea (application/x-ndjson)',
    fr: "L'import est vide : envoyez un objet JSON par ligne (application/x-ndjson)",
    de: 'Der Import ist leer: senden Sie ein JSON-Objekt pro Zeile (application/x-ndjson)',
  },
  not_json: {
    en: 'this line is not valid JSON',
    es: 'esta línea no es JSON válido',
    fr: "cette ligne n'est pas du JSON valide",
    de: 'diese Zeile ist kein gültiges JSON',
  },
  not_object: {
    en: 'this line is not a JSON object',
    es: 'esta línea no es un objeto JSON',
    fr: "cette ligne n'est pas un objet JSON",
    de: 'diese Zeile ist kein JSON-Objekt',
  },
  unknown_field: {
    en: 'is not a field of this type of line',
    es: 'no es un campo de este tipo de línea',
    fr: "n'est pas un champ de ce type de ligne",
    de: 'ist kein Feld dieser Art von Zeile',
  },
  does_not_exist: {
    en: 'does not exist (neither stored nor on an earlier line)',
    es: 'no existe (ni guardado ni en una línea anterior)',
    fr: "n'existe pas (ni enregistré, ni sur une ligne précédente)",
    de: 'existiert nicht (weder gespeichert noch in einer früheren Zeile)',
  },
  differs: {
    en: 'differs from the stored record with this id',
    es: 'difiere del registro guardado con este id',
    fr: "diffère de l'enregistrement stocké avec cet id",
    de: 'weicht vom gespeicherten Datensatz mit dieser ID ab',
  },
  other_subscription: {
    en: 'belongs to another subscription',
    es: 'pertenece a otra suscripción',
    fr: 'appartient à un autre abonnement',
    de: 'gehört zu einem anderen Abonnement',
  },
  blank_when_ended: {
    en: 'must be blank for a canceled or inactive subscription',
    es: 'debe estar vacío en una suscripción cancelada o inactiva',
    fr: 'doit être vide pour un abonnement annulé ou inactif',
    de: 'muss bei einem gekündigten oder inaktiven Abonnement leer sein',
  },
  paused_only_active: {
    en: 'can only be true for an active subscription',
    es: 'solo puede ser verdadero en una suscripción activa',
    fr: 'ne peut être vrai que pour un abonnement actif',
    de: 'kann nur bei einem aktiven Abonnement wahr sein',
  },
  invalid_time: {
    en: 'is not a valid time (ISO 8601 with a time zone, e.g. 2026-11-22T04:00:00.000Z)',
    es: 'no es una hora válida (ISO 8601 con zona horaria, p. ej. 2026-11-22T04:00:00.000Z)',
    fr: "n'est pas une heure valide (ISO 8601 avec fuseau horaire, p. ex. 2026-11-22T04:00:00.000Z)",
    de: 'ist keine gültige Zeitangabe (ISO 8601 mit Zeitzone, z. B. 2026-11-22T04:00:00.000Z)',
  },
} as const satisfies Record<string, Readonly<Record<Language, string>>>

export type ImportMessageKey = keyof typeof IMPORT_MESSAGES

export function translateImport(key: ImportMessageKey, language: Language, count?: number | string): string {
  const text: string = IMPORT_MESSAGES[key][language]
  return count === undefined ? text : text.replace('%{count}', String(count))
}

/** The 422 body of a refused import (docs/import.md): the line, and its errors in C4's shape. */
export interface ImportErrorBody {
  readonly error: string
  readonly line: number
  readonly errors: Record<string, string[]>
}

/**
 * A line the import refuses, and why: C4's field errors (the domain's own checks) and the
 * import's (references, stored rows). Thrown inside the import's unit, so nothing is kept.
 */
export class ImportLineError extends Error {
  override readonly name = 'ImportLineError'
  readonly line: number
  /** `subscription 4`: what the line is, when it got as far as saying. */
  readonly subject: string | undefined
  readonly fields: FieldErrors
  readonly own: readonly { readonly field: string; readonly key: ImportMessageKey }[]

  constructor(line: number, subject: string | undefined, fields: FieldErrors, own: readonly { field: string; key: ImportMessageKey }[] = []) {
    super(`line ${line}: refused`)
    this.line = line
    this.subject = subject
    this.fields = fields
    this.own = own
  }

  /** `{error: "line 12 (subscription 4): interval_length must be greater than 0", line, errors}`. */
  render(language: Language): ImportErrorBody {
    const errors: Record<string, string[]> = this.fields.render(language)
    for (const { field, key } of this.own) (errors[field] ??= []).push(translateImport(key, language))
    const parts = Object.entries(errors).flatMap(([field, messages]) => messages.map((m) => (field === 'base' ? m : `${field} ${m}`)))
    const where = translateImport('line', language, this.line) + (this.subject ? ` (${this.subject})` : '')
    return { error: `${where}: ${parts.join('; ')}`, line: this.line, errors }
  }
}

/** A line refused for one reason of the import's own. */
export function lineError(line: number, subject: string | undefined, field: string, key: ImportMessageKey): ImportLineError {
  return new ImportLineError(line, subject, new FieldErrors(), [{ field, key }])
}
