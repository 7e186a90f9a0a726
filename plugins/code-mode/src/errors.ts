import { CordageError } from '@cordage/core'

/** Why a program run failed: a limit it hit, a parse error, an interpreter failure, or an uncaught exception. */
export type CodeRunFailureKind = 'memory' | 'cpu' | 'timeout' | 'output' | 'calls' | 'syntax' | 'aborted' | 'runtime'

/**
 * A program did not complete (code `CODE_RUN_FAILED`). `kind` names the cause; the message carries
 * the detail and the logs captured before the failure, so the model can fix the program.
 */
export class CodeRunError extends CordageError {
  constructor(
    readonly kind: CodeRunFailureKind,
    readonly detail: string,
    readonly logs: readonly string[],
  ) {
    super(
      'CODE_RUN_FAILED',
      `run_code failed (${kind}): ${detail}\n${logs.length ? `Logs before the failure:\n${logs.join('\n')}` : 'No logs before the failure.'}`,
    )
  }
}

/** A `host` key the service cannot bind (code `INVALID_ARGS`): the message names the key and the rule. */
export class HostFunctionError extends CordageError {
  constructor(message: string) {
    super('INVALID_ARGS', message)
  }
}

/**
 * An evaluation in a code session did not complete (code `CODE_RUN_FAILED`). `kind` `runtime`: the
 * code threw (the message is its description, with the QuickJS stack); `timeout`: it outlived its
 * `timeoutMs`; anything else: the session ended, and the message says why.
 */
export class CodeSessionError extends CordageError {
  constructor(
    readonly kind: CodeRunFailureKind,
    readonly detail: string,
  ) {
    super('CODE_RUN_FAILED', detail)
  }
}
