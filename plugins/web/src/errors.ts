import { CordageError } from '@cordage/core'

/** Stable codes of the failures the web tools report to the model. */
export type WebErrorCode =
  | 'WEB_INVALID_URL'
  | 'WEB_BLOCKED_URL'
  | 'WEB_BLOCKED_ADDRESS'
  | 'WEB_TOO_MANY_REDIRECTS'
  | 'WEB_FETCH_FAILED'
  | 'WEB_FETCH_TIMEOUT'
  | 'WEB_UNSUPPORTED_CONTENT_TYPE'
  | 'WEB_UNSUPPORTED_ENCODING'
  | 'WEB_UNSUPPORTED_CHARSET'
  | 'WEB_CONVERSION_LIMIT'
  | 'WEB_CONVERSION_FAILED'
  | 'WEB_SEARCH_UNAVAILABLE'
  | 'WEB_SEARCH_FAILED'

/** A web tool failure written for the model: what happened and what to do next. */
export class WebError extends CordageError {
  declare readonly code: WebErrorCode
}
