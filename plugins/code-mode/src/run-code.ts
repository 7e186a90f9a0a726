import Schema from 'schemastery'
import { defineTool, type ContentBlock, type ToolDefinition } from '@cordage/core'
import type { CodeRunner } from '@cordage/services'
import type { SandboxLimits } from './budget.js'
import type { ProgramOutput } from './sandbox.js'

/** The model-facing name of the tool. */
export const RUN_CODE = 'run_code'

const parameters = Schema.object({
  code: Schema.string().required(),
})

const output = Schema.object({
  logs: Schema.array(Schema.string()).required(),
  result: Schema.any(),
})

/** The fixed part of the description; the generated SDK follows it. */
export function describeRunCode(limits: SandboxLimits): string {
  return [
    'Run JavaScript (an async function body, no TypeScript) in a sandbox to chain tool calls and process their values in code.',
    "`await tools.<name>(args)` takes the tool's arguments and resolves to its deep-frozen value (typed below); Promise.all overlaps calls; a failure throws ToolCallError (route on `code`: DENIED, INVALID_ARGS, …). console.log → logs; `return` JSON → result.",
    `Only tools reach outside (no require, import, process, files, network, timers). Per run: ${limits.cpuTimeMs} ms CPU, ${limits.timeoutMs} ms wall, ${Math.round(limits.memoryBytes / 1048576)} MiB, ${limits.maxOutputBytes} output bytes, ${limits.maxCalls} tool calls.`,
  ].join('\n')
}

/** Logs, then the result: strings raw, other JSON pretty-printed. */
export function renderRunCode(value: ProgramOutput): ContentBlock[] {
  const parts = [...value.logs]
  if (value.result !== undefined) parts.push(typeof value.result === 'string' ? value.result : JSON.stringify(value.result, null, 2))
  return [{ type: 'text', text: parts.length ? parts.join('\n') : '(the program logged nothing and returned undefined)' }]
}

/**
 * The `run_code` definition. Its `description` is a getter (the fixed text plus the current SDK), so
 * `ctx.tools.list()` always shows the SDK for the tools registered at that moment.
 */
export function createRunCode(runner: CodeRunner, sdk: () => string, limits: SandboxLimits): ToolDefinition {
  const fixed = describeRunCode(limits)
  const definition = defineTool({
    name: RUN_CODE,
    description: fixed,
    parameters,
    output: { schema: output, render: (_args, value) => renderRunCode(value as ProgramOutput) },
    async execute(args, exec) {
      const output = await runner.run({ code: args.code, signal: exec.signal, parent: exec.token, ...(exec.agent !== undefined && { agent: exec.agent }) })
      return output as any
    },
  })
  Object.defineProperty(definition, 'description', {
    enumerable: true,
    get: () => `${fixed}\n\`\`\`ts\n${sdk()}\`\`\``,
  })
  return definition
}
