import { CordageError } from '@cordage/core'

/** A workflow or ralph run could not start or failed; `code` says why. */
export class WorkflowError extends CordageError {}
