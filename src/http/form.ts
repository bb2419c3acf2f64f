import { badRequest } from './http-error.ts'

/**
 * `application/x-www-form-urlencoded` with Rails bracket notation, as lenient as Rack (C1):
 * bad `%` escapes stay literal, a bare key without `=` is null, `a[]` builds arrays, `a[][b]`
 * arrays of objects; a structure conflict (`a=1&a[b]=2`) is a 400.
 */
type FormValue = string | null | FormObject | FormValue[]
interface FormObject { [key: string]: FormValue }

const MAX_DEPTH = 32

export function parseForm(text: string): FormObject {
  const params = newObject()
  for (const piece of text.split('&')) {
    if (piece.length === 0) continue
    const eq = piece.indexOf('=')
    const name = decodeComponent(eq === -1 ? piece : piece.slice(0, eq))
    const value = eq === -1 ? null : decodeComponent(piece.slice(eq + 1))
    normalize(params, name, value, 0)
  }
  return params
}

function newObject(): FormObject {
  return Object.create(null) as FormObject
}

function isObject(v: FormValue | undefined): v is FormObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

const conflict = () => badRequest('Invalid form parameters: conflicting structure')

// A transcription of Rack's normalize_params, with the same outcomes for the same inputs.
function normalize(params: FormObject, name: string, value: FormValue, depth: number): FormObject {
  if (depth > MAX_DEPTH) throw badRequest('Invalid form parameters: nested too deeply')
  const head = /^[[\]]*([^[\]]+)\]*/.exec(name)
  const key = head?.[1] ?? ''
  if (key.length === 0) return params
  const after = name.slice(head?.[0].length ?? 0)

  if (after === '') {
    params[key] = value
  } else if (after === '[') {
    params[name] = value
  } else if (after === '[]') {
    const list = (params[key] ??= [])
    if (!Array.isArray(list)) throw conflict()
    list.push(value)
  } else if (after.startsWith('[]')) {
    const child = /^\[\]\[([^[\]]+)\]$/.exec(after)?.[1] ?? after.slice(2)
    const list = (params[key] ??= [])
    if (!Array.isArray(list)) throw conflict()
    const last = list[list.length - 1]
    if (isObject(last) && !hasNested(last, child)) normalize(last, child, value, depth + 1)
    else list.push(normalize(newObject(), child, value, depth + 1))
  } else {
    const nested = (params[key] ??= newObject())
    if (!isObject(nested)) throw conflict()
    params[key] = normalize(nested, after, value, depth + 1)
  }
  return params
}

// Rack's params_hash_has_key?: does `a[b][c]` already exist along this path?
function hasNested(object: FormObject, key: string): boolean {
  if (/\[\]/.test(key)) return false
  let current: FormValue | undefined = object
  for (const part of key.split(/[[\]]+/)) {
    if (part === '') continue
    if (!isObject(current) || !(part in current)) return false
    current = current[part]
  }
  return true
}

/** `+` is a space; valid `%XX` escapes become bytes (UTF-8); invalid ones are kept as written. */
export function decodeComponent(raw: string): string {
  const text = raw.includes('+') ? raw.replaceAll('+', ' ') : raw
  if (!text.includes('%')) return text
  const bytes: number[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 37 /* % */ && i + 2 < text.length && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16))
      i += 2
    } else {
      const end = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? i + 2 : i + 1
      for (const b of Buffer.from(text.slice(i, end), 'utf8')) bytes.push(b)
      i = end - 1
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
}
