import { CordageError, errorMessage } from '@cordage/core'

/** Stable codes of the failures the file tools report to the model. */
export type FsErrorCode =
  | 'PATH_OUTSIDE_ROOT'
  | 'NOT_FOUND'
  | 'IS_DIRECTORY'
  | 'NOT_A_DIRECTORY'
  | 'BINARY_FILE'
  | 'NOT_TEXT'
  | 'OFFSET_OUT_OF_RANGE'
  | 'FILE_TOO_LARGE'
  | 'NOT_READ'
  | 'STALE_FILE'
  | 'NO_MATCH'
  | 'AMBIGUOUS_MATCH'
  | 'NO_CHANGE'
  | 'INVALID_PATTERN'
  | 'SEARCH_FAILED'
  | 'WRITE_FAILED'

/** A file tool failure written for the model: the message says what happened and what to do next. */
export class FsError extends CordageError {
  declare readonly code: FsErrorCode
}

/** Maps a Node `fs` error on `display` to an `FsError` with a remedy; other coded errors (a denial) pass through. */
export function fsFailure(error: unknown, display: string): CordageError {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOENT') return new FsError('NOT_FOUND', `${display} does not exist; check the path (glob can list files)`, { cause: error })
  if (code === 'EISDIR') return new FsError('IS_DIRECTORY', `${display} is a directory, not a file; use glob to list its files`, { cause: error })
  if (code === 'ENOTDIR') return new FsError('NOT_A_DIRECTORY', `a parent of ${display} is a file, not a directory`, { cause: error })
  if (code === 'EACCES' || code === 'EPERM') return new FsError('WRITE_FAILED', `permission denied for ${display}`, { cause: error })
  if (CordageError.is(error)) return error
  const message = errorMessage(error)
  return new FsError('WRITE_FAILED', `${display}: ${message}`, { cause: error })
}
