/**
 * The one error type a handler throws to answer with a 4xx. Anything else that escapes a handler
 * is a bug: `respond.ts` logs it and answers 500 without its text.
 */
export class HttpError extends Error {
  readonly status: number
  readonly body: object
  readonly headers: Readonly<Record<string, string>> | undefined

  constructor(status: number, body: object, headers?: Record<string, string>) {
    super(`HTTP ${status}`)
    this.name = 'HttpError'
    this.status = status
    this.body = body
    this.headers = headers
  }
}

export const notFound = (): HttpError =>
  new HttpError(404, { error: 'The resource you were looking for could not be found.' })

export const badRequest = (message: string): HttpError => new HttpError(400, { error: message })
