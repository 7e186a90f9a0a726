// One error class for every provider, so callers route on the same codes whichever model runs.
export { ModelRequestError, type ModelRequestErrorCode } from '@cordage/services'
