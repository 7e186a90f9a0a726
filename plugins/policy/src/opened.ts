import { errorMessage, type ToolExec } from '@cordage/core'
import type { OpenedAccess, OpenedFile } from '@cordage/services'
import { denialOf, firstPreMatch } from './enforce.js'
import { formOf, type CallPathResolver, type PathForm } from './paths.js'
import type { Rule } from './rules.js'

/**
 * The `paths/opened` listener. A tool reports what it actually opened for a call; locations the call
 * was not checked under (a symlink or hard link swapped in after the check, another name of a file a
 * rule names) join the call's paths and the pre rules judge the call again. When the verdict becomes a
 * denial, or an approval the call did not get, the tool is told why it must stop; post rules see the
 * added locations too. A failure to check denies (policy fails closed).
 */
export function createOpenedListener(rules: readonly Rule[], resolver: CallPathResolver, root: string) {
  return (exec: ToolExec, file: OpenedFile, access: OpenedAccess): string | undefined => {
    const opened = formOf(root, file.real, file.directory)
    let aliases: PathForm[]
    let fresh: PathForm[]
    try {
      const known = resolver.resolve(exec)
      aliases = !file.directory && file.nlink > 1n ? resolver.named.formsOf(file.dev, file.ino).filter((form) => form.real !== opened.real) : []
      fresh = [opened, ...aliases].filter((form) => !known.some((path) => path.forms.some((seen) => seen.real === form.real)))
    } catch (error) {
      return `what this call opened could not be checked against the path rules, so it was denied: ${errorMessage(error)}`
    }
    if (fresh.length === 0) return undefined
    const before = firstPreMatch(rules, exec)
    resolver.add(exec, { access, forms: fresh })
    const after = firstPreMatch(rules, exec)
    if (!after || ('rule' in after && (after.rule.action === 'allow' || (before && 'rule' in before && before.rule === after.rule)))) return undefined
    const also = aliases.length ? `, which is also ${aliases.map(nameOf).join(', ')} (a hard link)` : ''
    return `${'error' in after ? after.error : denialOf(after.rule)} (the call opened ${nameOf(opened)}${also})`
  }
}

const nameOf = (form: PathForm) => form.relative ?? form.real
