import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { changeMeta } from './diff.js'
import { FsError } from './errors.js'
import { publish, readForChange } from './file-io.js'
import type { FsRuntime } from './runtime.js'

const Parameters = Schema.object({
  path: Schema.string().required().description('File to edit, relative to the workspace root.'),
  old_string: Schema.string().min(1).required().description('Exact text to replace (whitespace and indentation included).'),
  new_string: Schema.string().required().description('Replacement text.'),
  replace_all: Schema.boolean().default(false).description('Replace every occurrence instead of requiring exactly one.'),
})

const Output = Schema.object({
  path: Schema.string().required(),
  before: Schema.string().required(),
  after: Schema.string().required(),
  replacements: Schema.natural().required(),
})

/** 1-based line numbers of each match start. */
function matchLines(text: string, needle: string): number[] {
  const lines: number[] = []
  let line = 1
  // The next newline not yet counted: each is found once, so many matches on one long line stay linear.
  let newline = text.indexOf('\n')
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) {
    for (; newline !== -1 && newline < index; newline = text.indexOf('\n', newline + 1)) line++
    lines.push(line)
  }
  return lines
}

/** The `edit` tool: exact string replacement in a file that was read, preserving CRLF line endings. */
export function editTool(runtime: FsRuntime): ToolDefinition {
  const { workspace } = runtime
  return defineTool({
    name: 'edit',
    description:
      'Replace exact text in a file that was read before. old_string must match exactly once unless replace_all is true; include surrounding lines to make it unique.',
    parameters: Parameters,
    // Edit reads the file (a match or its absence tells the model about the content) and changes it.
    paths: [
      { pointer: '/path', access: 'read' },
      { pointer: '/path', access: 'write' },
    ],
    output: {
      schema: Output,
      render: (_args, value) => [
        { type: 'text', text: `Edited ${value.path} (${value.replacements} ${value.replacements === 1 ? 'replacement' : 'replacements'}).` },
      ],
      presentationMeta: (_args, value) => changeMeta(value.path, value.before, value.after, runtime.settings.maxDiffBytes),
    },
    async execute(args, exec) {
      const target = await workspace.resolve(args.path)
      if (!target.exists) throw new FsError('NOT_FOUND', `${target.display} does not exist; use write to create it`)
      if (args.old_string === args.new_string) throw new FsError('NO_CHANGE', 'old_string and new_string are identical; nothing to change')
      const { text: before, mode } = await readForChange(runtime, target, exec)
      let search = args.old_string
      let replacement = args.new_string
      let lines = matchLines(before, search)
      // Models write LF; a CRLF file still matches, and the replacement keeps CRLF.
      if (lines.length === 0 && before.includes('\r\n') && search.includes('\n')) {
        search = search.replace(/\r?\n/g, '\r\n')
        replacement = replacement.replace(/\r?\n/g, '\r\n')
        lines = matchLines(before, search)
      }
      if (lines.length === 0) {
        throw new FsError(
          'NO_MATCH',
          `old_string was not found in ${target.display}; read the file again and copy the exact text, including whitespace and indentation`,
        )
      }
      if (lines.length > 1 && !args.replace_all) {
        const shown = lines.slice(0, 20).join(', ') + (lines.length > 20 ? ', …' : '')
        throw new FsError(
          'AMBIGUOUS_MATCH',
          `old_string matches ${lines.length} times in ${target.display} (lines ${shown}); include more surrounding text to make it unique, or set replace_all: true`,
        )
      }
      const after = args.replace_all ? before.split(search).join(replacement) : before.replace(search, () => replacement)
      await publish(runtime, target, after, mode)
      return { path: target.display, before, after, replacements: lines.length }
    },
  })
}
