import { CordageError } from '@cordage/core'

/** The list breaks a rule the schema cannot express (blank content, repeated ids, too many in progress). */
export class InvalidTodosError extends CordageError {
  constructor(message: string) {
    super('INVALID_TODOS', `invalid todos: ${message}`)
  }
}
