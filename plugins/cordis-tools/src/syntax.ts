/**
 * A syntax error in mounted code as the model can fix it: its line, the offending source line with a
 * caret under the column, and a hint. `description` is the sandbox's (`SyntaxError: <message>\n    at
 * <file>:<line>:<column>`); `prefix` is the wrapper text before the code on its first line.
 */
export function syntaxMessage(description: string, code: string, prefix: string): string {
  const message = (description.split('\n', 1)[0] ?? '').replace(/^SyntaxError: /, '')
  const location = /:(\d+):(\d+)/.exec(description)
  const line = location ? Number(location[1]) : undefined
  const column = location ? Number(location[2]) - (line === 1 ? prefix.length : 0) : undefined
  const lines = code.split('\n')
  const source = line !== undefined && line >= 1 && line <= lines.length ? lines[line - 1] : undefined
  const hint =
    source !== undefined && /\bas\s+\w|:\s*(string|number|boolean|any|void)\b|\binterface\s+\w/.test(source)
      ? 'mounted code is plain JavaScript, not TypeScript: remove type annotations'
      : 'check that brackets and braces balance; the code is the body of an async function, so end it with `return plugin`'
  const where = line !== undefined && line <= lines.length ? ` at line ${line}` : ' at the end of the code'
  const caret = column !== undefined && column >= 1 ? `\n  ${' '.repeat(column - 1)}^` : ''
  return `syntax error${where}: ${message}${source !== undefined ? `\n  ${source}${caret}` : ''}\n(${hint})`
}
