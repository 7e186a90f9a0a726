import { CordageError } from '@cordage/core'

/** No skill of that name exists in any root (or it was removed since the catalog was sent). */
export class UnknownSkillError extends CordageError {
  constructor(name: string, known: string[]) {
    super('UNKNOWN_SKILL', `skill "${name}" is unknown or no longer available; available skills: ${known.length ? known.join(', ') : '(none)'}`)
  }
}

/** The skill's front matter says `disable-model-invocation: true`. */
export class SkillNotInvocableError extends CordageError {
  constructor(name: string) {
    super('SKILL_NOT_INVOCABLE', `skill "${name}" is not available for model invocation; only the user can use it`)
  }
}
