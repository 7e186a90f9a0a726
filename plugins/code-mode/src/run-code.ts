import Schema from 'schemastery'
import { defineTool, type ContentBlock, type ToolDefinition } from '@cordage/core'
import type { CodeRunner } from '@cordage/services'
import type { SandboxLimits } from './budget.js'
import type { ProgramOutput } from './sandbox.js'

/** The model-facing name of the tool. */
export const RUN_CODE = 'run_code'

const parameters = Schema.object({
  code: Schema.string()
    .required()
    .description('JavaScript: the body of an async function. Use `await tools.<name>(args)`, `console.log(...)`, and `return` a JSON value.'),
})

const output = Schema.object({
  logs: Schema.array(Schema.string()).required(),
  result: Schema.any(),
})

/** The fixed part of the description; the generated SDK follows it. */
export function describeRunCode(limits: SandboxLimits): string {
  return [
    'Run a JavaScript program in a sandbox and return its console output and return value. Use it to chain tool calls and process their results in code instead of reading them one by one.',
    'The program is the body of an async function (plain JavaScript, no TypeScript syntax). `await tools.<name>(args)` calls a tool and resolves to its structured value (deep-frozen, typed below), or rejects with a ToolCallError { toolName, message }; independent calls may run together with Promise.all. `console.log` lines are returned as logs; `return` a JSON value to return it as the result.',
    `There is no require, import, process, filesystem, network or timers except through tools. Limits per run: ${limits.cpuTimeMs} ms CPU, ${limits.timeoutMs} ms wall clock, ${Math.round(limits.memoryBytes / 1048576)} MiB memory, ${limits.maxOutputBytes} bytes of logs plus result, ${limits.maxCalls} tool calls. run_code itself cannot be called from a program.`,
  ].join('\n\n')
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
    get: () => `${fixed}\n\nTools available to programs (TypeScript declarations):\n\`\`\`ts\n${sdk()}\`\`\``,
  })
  return definition
}
