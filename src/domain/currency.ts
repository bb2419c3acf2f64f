// ISO 4217 active codes (list of 2024, with funds and precious-metal codes), so validation does
// not depend on which ICU build the runtime carries. C16 names `Intl.supportedValuesOf('currency')`
// as the list: every code it gives is accepted too (it adds retired ones such as HRK), so a code
// valid before C16 stays valid and every code the runtime knows is valid (docs/decisions.md, "Money").
const CODES = new Set([
  ...`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP
  BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB
  EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY
  KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR
  MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB
  RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD
  TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG
  XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG ZWL`.split(/\s+/),
  ...Intl.supportedValuesOf('currency'),
])

/** The upper-case code when `value` is an ISO 4217 code (any case), else undefined. */
export function currencyCode(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value)) return undefined
  const code = value.toUpperCase()
  return CODES.has(code) ? code : undefined
}

const DIGITS = new Map<string, number>()

/**
 * The number of minor-unit digits of a currency (C16): what `Intl.NumberFormat` shows for it, so
 * JPY has none, USD two, BHD three and CLF four. Any well-formed code answers (2 for one Intl does
 * not know), so a stored currency always formats.
 */
export function minorDigits(code: string): number {
  let digits = DIGITS.get(code)
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2
    DIGITS.set(code, digits)
  }
  return digits
}

/** Every known code whose minor-unit digits are not 2, by digits (SQL renders money with these: src/store/money-sql.ts). */
export function codesByDigits(): ReadonlyMap<number, readonly string[]> {
  const out = new Map<number, string[]>()
  for (const code of [...CODES].sort()) {
    const digits = minorDigits(code)
    if (digits === 2) continue
    const list = out.get(digits)
    if (list) list.push(code)
    else out.set(digits, [code])
  }
  return out
}
