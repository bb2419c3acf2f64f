/**
 * Every message a client can read in a validation body, in one table (C4). Keys are permanent;
 * the wording and its translations may change. `%{count}` is filled in by `translate`.
 */
export const LANGUAGES = ['en', 'es', 'fr', 'de'] as const
export type Language = (typeof LANGUAGES)[number]

type Texts = Readonly<Record<Language, string>>

export const MESSAGES = {
  not_a_number: { en: 'is not a number', es: 'no es un número', fr: "n'est pas un nombre", de: 'ist keine Zahl' },
  not_an_integer: { en: 'must be an integer', es: 'debe ser un entero', fr: 'doit être un nombre entier', de: 'muss ganzzahlig sein' },
  greater_than_0: { en: 'must be greater than 0', es: 'debe ser mayor que 0', fr: 'doit être supérieur à 0', de: 'muss größer als 0 sein' },
  less_than_or_equal_to: {
    en: 'must be less than or equal to %{count}',
    es: 'debe ser menor que o igual a %{count}',
    fr: 'doit être inférieur ou égal à %{count}',
    de: 'muss kleiner oder gleich %{count} sein',
  },
  inclusion: { en: 'is not included in the list', es: 'no está incluido en la lista', fr: "n'est pas inclus(e) dans la liste", de: 'ist kein gültiger Wert' },
  invalid_date: { en: 'is not a valid date', es: 'no es una fecha válida', fr: "n'est pas une date valide", de: 'ist kein gültiges Datum' },
  today_or_later: { en: 'must be today or later', es: 'debe ser hoy o posterior', fr: "doit être aujourd'hui ou plus tard", de: 'muss heute oder später sein' },
  after_today: { en: 'must be after today', es: 'debe ser posterior a hoy', fr: "doit être après aujourd'hui", de: 'muss nach heute liegen' },
  invalid_currency: { en: 'is not a valid currency code', es: 'no es un código de moneda válido', fr: "n'est pas un code de devise valide", de: 'ist kein gültiger Währungscode' },
  cannot_subscribe: {
    en: 'The requested item cannot be subscribed',
    es: 'No es posible suscribirse al artículo solicitado',
    fr: "L'article demandé ne peut pas faire l'objet d'un abonnement",
    de: 'Der angeforderte Artikel kann nicht abonniert werden',
  },
  blank: { en: "can't be blank", es: 'no puede estar en blanco', fr: 'doit être rempli(e)', de: 'muss ausgefüllt werden' },
  invalid: { en: 'is invalid', es: 'no es válido', fr: "n'est pas valide", de: 'ist nicht gültig' },
  taken: { en: 'has already been taken', es: 'ya está en uso', fr: "n'est pas disponible", de: 'ist bereits vergeben' },
  too_short: {
    en: 'is too short (minimum is %{count} characters)',
    es: 'es demasiado corto (%{count} caracteres mínimo)',
    fr: 'est trop court (au moins %{count} caractères)',
    de: 'ist zu kurz (mindestens %{count} Zeichen)',
  },
  too_long: {
    en: 'is too long (maximum is %{count} characters)',
    es: 'es demasiado largo (%{count} caracteres máximo)',
    fr: 'est trop long (pas plus de %{count} caractères)',
    de: 'ist zu lang (höchstens %{count} Zeichen)',
  },
  invalid_payment: {
    en: 'Invalid payment method or source',
    es: 'Método o fuente de pago no válidos',
    fr: 'Moyen ou source de paiement invalide',
    de: 'Ungültige Zahlungsart oder Zahlungsquelle',
  },
  cannot_skip_paused: {
    en: 'cannot skip a subscription which is paused',
    es: 'no se puede omitir una suscripción que está en pausa',
    fr: 'impossible de sauter un abonnement en pause',
    de: 'ein pausiertes Abonnement kann nicht übersprungen werden',
  },
  cannot_skip_ended: {
    en: 'cannot skip a subscription which is canceled or inactive',
    es: 'no se puede omitir una suscripción cancelada o inactiva',
    fr: 'impossible de sauter un abonnement annulé ou inactif',
    de: 'ein gekündigtes oder inaktives Abonnement kann nicht übersprungen werden',
  },
  cannot_date_ended: {
    en: 'cannot be set on a subscription which is canceled or inactive',
    es: 'no se puede fijar en una suscripción cancelada o inactiva',
    fr: 'ne peut pas être fixée pour un abonnement annulé ou inactif',
    de: 'kann für ein gekündigtes oder inaktives Abonnement nicht festgelegt werden',
  },
  cannot_pause: {
    en: 'cannot pause/resume a subscription which is not active',
    es: 'no se puede pausar/reanudar una suscripción que no está activa',
    fr: "impossible de suspendre/reprendre un abonnement qui n'est pas actif",
    de: 'ein nicht aktives Abonnement kann nicht pausiert/fortgesetzt werden',
  },
  successive_skips_exceeded: {
    en: 'This subscription has exceeded the maximum configured successive skip limit. It can be skipped again after the next time it is processed.',
    es: 'Esta suscripción ha superado el límite configurado de omisiones consecutivas. Podrá omitirse de nuevo después de la próxima vez que se procese.',
    fr: 'Cet abonnement a dépassé la limite configurée de sauts consécutifs. Il pourra être sauté à nouveau après son prochain traitement.',
    de: 'Dieses Abonnement hat die konfigurierte Höchstzahl aufeinanderfolgender Auslassungen überschritten. Es kann nach der nächsten Verarbeitung wieder ausgelassen werden.',
  },
  total_skips_exceeded: {
    en: 'This subscription has exceeded the maximum configured skip limit. It can no longer be skipped.',
    es: 'Esta suscripción ha superado el límite configurado de omisiones. Ya no puede omitirse.',
    fr: 'Cet abonnement a dépassé la limite configurée de sauts. Il ne peut plus être sauté.',
    de: 'Dieses Abonnement hat die konfigurierte Höchstzahl an Auslassungen überschritten. Es kann nicht mehr ausgelassen werden.',
  },
  invalid_outcome: { en: 'is not included in the list', es: 'no está incluido en la lista', fr: "n'est pas inclus(e) dans la liste", de: 'ist kein gültiger Wert' },
  too_many_entries: {
    en: 'is too long (maximum is %{count} entries)',
    es: 'es demasiado largo (%{count} elementos máximo)',
    fr: 'est trop long (pas plus de %{count} éléments)',
    de: 'ist zu lang (höchstens %{count} Einträge)',
  },
  greater_than_or_equal_to_0: {
    en: 'must be greater than or equal to 0',
    es: 'debe ser mayor que o igual a 0',
    fr: 'doit être supérieur ou égal à 0',
    de: 'muss größer oder gleich 0 sein',
  },
  between_1_and: {
    en: 'must be between 1 and %{count}',
    es: 'debe estar entre 1 y %{count}',
    fr: 'doit être compris entre 1 et %{count}',
    de: 'muss zwischen 1 und %{count} liegen',
  },
  installment_closed: {
    en: 'cannot record an outcome for an installment which is %{count}',
    es: 'no se puede registrar un resultado para una entrega en estado %{count}',
    fr: "impossible d'enregistrer un résultat pour une livraison à l'état %{count}",
    de: 'für eine Lieferung im Zustand %{count} kann kein Ergebnis erfasst werden',
  },
  nul_character: {
    en: 'must not contain a NUL character',
    es: 'no debe contener el carácter NUL',
    fr: 'ne doit pas contenir le caractère NUL',
    de: 'darf kein NUL-Zeichen enthalten',
  },
  // C16: money.
  invalid_amount: { en: 'is not a valid amount', es: 'no es un importe válido', fr: "n'est pas un montant valide", de: 'ist kein gültiger Betrag' },
  unknown_currency: {
    en: 'has an unknown currency: %{count}',
    es: 'tiene una moneda desconocida: %{count}',
    fr: 'contient une devise inconnue : %{count}',
    de: 'enthält eine unbekannte Währung: %{count}',
  },
  between_0_and_100: { en: 'must be between 0 and 100', es: 'debe estar entre 0 y 100', fr: 'doit être compris entre 0 et 100', de: 'muss zwischen 0 und 100 liegen' },
  percent_decimals: {
    en: 'must have at most 2 decimal places',
    es: 'debe tener como máximo 2 decimales',
    fr: 'doit avoir au plus 2 décimales',
    de: 'darf höchstens 2 Nachkommastellen haben',
  },
  invalid_month: { en: 'is not a valid month', es: 'no es un mes válido', fr: "n'est pas un mois valide", de: 'ist kein gültiger Monat' },
  not_before_from: {
    en: 'must not be before from',
    es: 'no debe ser anterior a from',
    fr: 'ne doit pas être avant from',
    de: 'darf nicht vor from liegen',
  },
  months_from: {
    en: 'must be within %{count} months of from',
    es: 'debe estar a no más de %{count} meses de from',
    fr: 'doit être à moins de %{count} mois de from',
    de: 'muss innerhalb von %{count} Monaten ab from liegen',
  },
} as const satisfies Record<string, Texts>

export type MessageKey = keyof typeof MESSAGES

export function translate(key: MessageKey, language: Language, count?: number | string): string {
  const text: string = MESSAGES[key][language]
  return count === undefined ? text : text.replace('%{count}', String(count))
}

/**
 * Accept-Language negotiation (RFC 9110 §12.5.4): highest quality first, `es-MX` falls back to
 * `es`, `*` and anything unknown give English.
 */
export function negotiateLanguage(header: string | undefined): Language {
  if (!header) return 'en'
  let best: Language = 'en'
  let bestQ = -1
  for (const part of header.split(',')) {
    const [tagRaw, ...params] = part.trim().split(';')
    const tag = (tagRaw ?? '').trim().toLowerCase()
    let q = 1
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)
      if (m) q = Number(m[1])
    }
    if (q <= 0 || tag.length === 0) continue
    const primary = tag.split('-')[0] as Language
    const language: Language | undefined = (LANGUAGES as readonly string[]).includes(primary) ? primary : undefined
    if (language && q > bestQ) {
      best = language
      bestQ = q
    }
  }
  return best
}
