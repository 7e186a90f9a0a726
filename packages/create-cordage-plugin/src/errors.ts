/**
 * A refusal the person running the scaffolder can act on; `code` is stable. (This package has no
 * dependencies, so `npm init cordage-plugin` downloads one small package: it does not extend
 * `@cordage/core`'s `CordageError`, but keeps its shape.)
 */
export class ScaffoldError extends Error {
  constructor(
    readonly code: 'INVALID_NAME' | 'TARGET_NOT_EMPTY' | 'NOT_A_WORKSPACE' | 'USAGE',
    message: string,
  ) {
    super(message)
    this.name = 'ScaffoldError'
  }
}
