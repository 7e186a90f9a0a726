import { CordageError } from '@cordage/core'

/** HTTP status of each code the API answers with; a code not listed is a 500. */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  INVALID_JSON: 400,
  INVALID_BODY: 400,
  INVALID_QUERY: 400,
  INVALID_ANSWER: 400,
  INVALID_SESSION_ID: 400,
  INVALID_CASSETTE: 400,
  UNAUTHORIZED: 401,
  HOST_REFUSED: 403,
  ORIGIN_REFUSED: 403,
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  REQUEST_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  ALREADY_ANSWERED: 409,
  SESSION_EXISTS: 409,
  RUN_ENDED: 409,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_RUNS: 503,
  TOO_MANY_STREAMS: 503,
  STORE_UNAVAILABLE: 503,
  NO_MODEL: 503,
  SHUTTING_DOWN: 503,
  QUEUE_UNAVAILABLE: 503,
  RUN_NOT_KEPT: 503,
}

/** An error the API answers with `{ error: { code, message } }` at the status its code maps to. */
export class ServerError extends CordageError {
  /** The HTTP status for this error's code. */
  get status(): number {
    return statusOf(this.code)
  }
}

/** The HTTP status a `CordageError` code maps to (500 for codes the API does not know). */
export function statusOf(code: string): number {
  return STATUS_OF_CODE[code] ?? 500
}
