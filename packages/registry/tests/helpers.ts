import Schema from 'schemastery'
import { defineTool, type Infer, type ToolDefinition } from '@cordage/core'

const EchoOutput = Schema.object({ message: Schema.string().required(), length: Schema.natural().required(), secret: Schema.string() })

/** A small typed tool used across the registry tests. */
export const echo = defineTool({
  name: 'echo',
  description: 'Echoes a message.',
  parameters: Schema.object({ message: Schema.string().required(), secret: Schema.string() }),
  output: {
    schema: EchoOutput,
    render: (_args, value) => [{ type: 'text', text: `echo: ${value.message}` }],
    presentationMeta: (args, value) => ({ arg: args.message, length: value.length }),
  },
  // `secret` is optional in the schema; schemastery's inferred type cannot say so.
  execute: (args) => ({ message: args.message, length: args.message.length, ...(args.secret && { secret: args.secret }) }) as Infer<typeof EchoOutput>,
})

/** A raw definition whose body returns whatever the test puts in `returns`. */
export function rawTool(name: string, body: ToolDefinition['execute'], extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    description: `raw tool ${name}`,
    parameters: { type: 'object' },
    output: { schema: {}, render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) ?? 'undefined' }] },
    execute: body,
    ...extra,
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
