import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { changeMeta, lineCount, plural, usesCrlf } from './diff.js'
import { publish, readForChange } from './file-io.js'
import type { FsRuntime } from './runtime.js'

const Parameters = Schema.object({
  path: Schema.string().required().description('File to create or overwrite, relative to the workspace root.'),
  content: Schema.string().required().description('The complete new content of the file.'),
})

const Output = Schema.object({
  path: Schema.string().required(),
  operation: Schema.union(['create', 'update']).required(),
  before: Schema.union([Schema.string(), Schema.const(null)]).required(),
  after: Schema.string().required(),
})

/** The `write` tool: creates or replaces a whole file, atomically, keeping its mode and line endings. */
export function writeTool(runtime: FsRuntime): ToolDefinition {
  const { workspace } = runtime
  return defineTool({
    name: 'write',
    description:
      'Create a file or replace its whole content. Parent directories are created. An existing file must have been read first (and not changed since); prefer edit for small changes to existing files.',
    parameters: Parameters,
    paths: [{ pointer: '/path', access: 'write' }],
    output: {
      schema: Output,
      render: (_args, value) => [
        {
          type: 'text',
          text: `${value.operation === 'create' ? 'Created' : 'Updated'} ${value.path} (${plural(lineCount(value.after), 'line')}, ${plural(Buffer.byteLength(value.after), 'byte')}).`,
        },
      ],
      presentationMeta: (_args, value) => changeMeta(value.path, value.before, value.after, runtime.settings.maxDiffBytes),
    },
    async execute(args, exec) {
      const target = await workspace.resolve(args.path)
      let before: string | null = null
      let mode: number | undefined
      let after = args.content
      if (target.exists) {
        ;({ text: before, mode } = await readForChange(runtime, target, exec))
        // Content written with bare LF into a CRLF file keeps the file's convention.
        if (usesCrlf(before) && !after.includes('\r')) after = after.replace(/\n/g, '\r\n')
      }
      await publish(runtime, target, after, mode)
      return { path: target.display, operation: before === null ? ('create' as const) : ('update' as const), before, after }
    },
  })
}
