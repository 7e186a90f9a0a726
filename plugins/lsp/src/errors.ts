import { CordageError } from '@cordage/core'

/** Stable codes of the failures the lsp tool reports to the model. */
export type LspErrorCode =
  | 'LSP_NO_SERVER'
  | 'LSP_PATH_OUTSIDE_ROOT'
  | 'LSP_NOT_FOUND'
  | 'LSP_FILE_TOO_LARGE'
  | 'LSP_POSITION_REQUIRED'
  | 'LSP_POSITION_OUT_OF_RANGE'
  | 'LSP_START_FAILED'
  | 'LSP_SERVER_CRASHED'
  | 'LSP_REQUEST_FAILED'
  | 'LSP_TIMEOUT'
  | 'LSP_UNSUPPORTED_OPERATION'
  | 'LSP_DISPOSED'

/** An lsp tool failure written for the model: what happened and what to do next. */
export class LspError extends CordageError {
  declare readonly code: LspErrorCode
}
