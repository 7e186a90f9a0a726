import { CordageError } from '@cordage/core'

/** A text longer than `maxCharacters`: the message gives the limit, so the model can split the text. */
export class TextTooLongError extends CordageError {
  constructor(length: number, limit: number) {
    super('TEXT_TOO_LONG', `the text has ${length} characters; __tool__ takes at most ${limit} (split it and call __tool__ once per part)`)
    this.name = 'TextTooLongError'
  }
}
