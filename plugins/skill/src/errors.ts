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

/** The SKILL.md is over the configured size limit; nothing of it was loaded. */
export class SkillTooLargeError extends CordageError {
  constructor(name: string, size: number, limit: number) {
    super(
      'SKILL_TOO_LARGE',
      `skill "${name}" is ${size} bytes, over the limit of ${limit} bytes (the skill plugin's maxSkillBytes); it was not loaded. Tell the user: the SKILL.md must be shortened or the limit raised`,
    )
  }
}

/** The SKILL.md can no longer be read inside the skill roots (replaced by a link out, or unreadable). */
export class SkillUnreadableError extends CordageError {
  constructor(name: string, reason: string, outside: boolean) {
    super(outside ? 'SKILL_OUTSIDE_ROOTS' : 'SKILL_UNREADABLE', `skill "${name}" was not loaded: its SKILL.md ${reason}`)
  }
}
