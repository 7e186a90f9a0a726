import Schema from 'schemastery'
import { defineTool, type ContentBlock, type JsonValue, type ToolDefinition, type ToolExecutionResult } from '@cordage/core'
import type { ExecuteInput } from '@cordage/registry'
import { runProgram, type ProgramOutput, type SandboxLimits } from './sandbox.js'
import { CallScheduler, type CallOutcome } from './scheduler.js'

/** The model-facing name of the tool. */
export const RUN_CODE = 'run_code'

/** What `run_code` needs from the registry; `catalog()` answers the bindable tools and the SDK text. */
export interface RunCodeHost {
  execute(input: ExecuteInput): Promise<ToolExecutionResult>
  isParallel(name: string, args: JsonValue): boolean
  catalog(): { names: readonly string[]; sdk: string }
}

const parameters = Schema.object({
  code: Schema.string().required().description('JavaScript: the body of an async function. Use `await tools.<name>(args)`, `console.log(...)`, and `return` a JSON value.'),
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

/** Maps a nested call's final result to what the program receives. */
function toOutcome(result: ToolExecutionResult): CallOutcome {
  return result.isError ? { ok: false, message: result.error.message } : { ok: true, json: JSON.stringify(result.value) }
}

/**
 * The `run_code` definition. Its `description` is a getter (the fixed text plus the current SDK), so
 * `ctx.tools.list()` always shows the SDK for the tools registered at that moment.
 */
export function createRunCode(host: RunCodeHost, limits: SandboxLimits): ToolDefinition {
  const fixed = describeRunCode(limits)
  const definition = defineTool({
    name: RUN_CODE,
    description: fixed,
    parameters,
    output: { schema: output, render: (_args, value) => renderRunCode(value as ProgramOutput) },
    async execute(args, exec) {
      const { names } = host.catalog()
      const scheduler = new CallScheduler((name, callArgs, signal) => {
        // A program must not start another program (no recursion through run_code).
        if (name === RUN_CODE) return Promise.resolve({ ok: false, message: `${RUN_CODE} cannot be called from inside a program` })
        return host.execute({ name, arguments: callArgs, parent: exec.token, signal, ...(exec.agent !== undefined && { agent: exec.agent }) }).then(toOutcome)
      }, host.isParallel)
      const result = await runProgram({ code: args.code, limits, toolNames: names, scheduler, signal: exec.signal })
      return result as any
    },
  })
  Object.defineProperty(definition, 'description', {
    enumerable: true,
    get: () => `${fixed}\n\nTools available to programs (TypeScript declarations):\n\`\`\`ts\n${host.catalog().sdk}\`\`\``,
  })
  return definition
}
