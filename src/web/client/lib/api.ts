/**
 * The pages' one way to call the JSON APIs. The browser sends its Accept-Language, so the
 * messages in an error answer are already in the page's language; they are shown as they come.
 */
export class ApiError extends Error {
  readonly status: number
  /** 422 field errors, `{field: [message, …]}` (C4), when the answer has them. */
  readonly fields: Readonly<Record<string, readonly string[]>> | undefined

  constructor(status: number, message: string, fields?: Record<string, string[]>) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.fields = fields
  }
}

export interface Api {
  get<T>(path: string): Promise<T>
  post<T>(path: string, body?: unknown): Promise<T>
  patch<T>(path: string, body: unknown): Promise<T>
  del<T>(path: string): Promise<T>
  /**
   * The same writes as dry runs (C18, `Replenish-Dry-Run: 1`): the API answers exactly what the
   * request would (the changed record, or its 422) and changes nothing: what a page shows before
   * the person confirms.
   */
  readonly dryRun: Writes
}

/** The writing calls of an Api. */
export type Writes = Pick<Api, 'post' | 'patch' | 'del'>

/**
 * `headers()` is asked before each request: the portal adds its CSRF token, the staff console
 * its `Authorization`. `networkMessage` is the page's own words for a request that got no answer.
 */
export function createApi(headers: () => Record<string, string>, networkMessage: string): Api {
  const call = async <T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> => {
    let res: Response
    try {
      res = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers(), ...extra },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    } catch {
      throw new ApiError(0, networkMessage)
    }
    const text = await res.text()
    let json: unknown
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    if (!res.ok) throw errorOf(res.status, json)
    return json as T
  }
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body ?? {}),
    patch: (path, body) => call('PATCH', path, body),
    del: (path) => call('DELETE', path),
    dryRun: {
      post: (path, body) => call('POST', path, body ?? {}, DRY_RUN),
      patch: (path, body) => call('PATCH', path, body, DRY_RUN),
      del: (path) => call('DELETE', path, undefined, DRY_RUN),
    },
  }
}

const DRY_RUN = { 'replenish-dry-run': '1' }

function errorOf(status: number, body: unknown): ApiError {
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>
    if (typeof record['error'] === 'string') return new ApiError(status, record['error'])
    if (status === 422) {
      const fields: Record<string, string[]> = {}
      for (const [name, messages] of Object.entries(record)) {
        if (Array.isArray(messages)) fields[name] = messages.map(String)
      }
      return new ApiError(status, Object.entries(fields).map(([f, m]) => `${f} ${m.join(', ')}`).join('; '), fields)
    }
  }
  return new ApiError(status, `HTTP ${status}`)
}
