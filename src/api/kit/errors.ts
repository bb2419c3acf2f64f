import { HttpError } from '../../http/http-error.ts'

/** A valid key that does not own the record: 401, not 403 (interface-v1). */
export const notAuthorized = (): HttpError => new HttpError(401, { error: 'You are not authorized to perform that action.' })
