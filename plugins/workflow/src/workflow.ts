import { randomUUID } from 'node:crypto'
import Schema from 'schemastery'
import { defineTool, isJsonObject, type JsonSchemaNode, type JsonValue, type ToolDefinition } from '@cordage/core'
import type { ChildRunOptions, CodeRunner, SubagentService } from '@cordage/services'
import { WorkflowError } from './errors.js'
import type { Lifetime } from './lifetime.js'
import { Limiter } from './limiter.js'
import type { Nesting } from './nesting.js'
import { plural, resultText } from './result-text.js'

/** What `workflow` needs from its plugin. */
export interface WorkflowHost {
  subagents: () => SubagentService | undefined
  codeMode: () => CodeRunner | undefined
  maxAgents: number
  maxConcurrentAgents: number
  nesting: Nesting
  lifetime: Lifetime
}

/** `{ runId, agentsStarted, result }`: shared by `workflow` and `ralph`. */
export const RunValue = Schema.object({
  runId: Schema.string().required(),
  agentsStarted: Schema.natural().required(),
  result: Schema.any().required(),
})

const OPTION_KEYS = new Set(['prompt', 'tools', 'outputSchema', 'agent', 'label'])

/** Checks what a program passed to `agents.run`; a mistake rejects that call with a message naming it. */
export function childOptions(args: JsonValue): ChildRunOptions {
  if (!isJsonObject(args)) throw new WorkflowError('INVALID_ARGS', 'agents.run takes one object: { prompt, tools?, outputSchema?, agent?, label? }')
  const unknown = Object.keys(args).filter((key) => !OPTION_KEYS.has(key))
  if (unknown.length)
    throw new WorkflowError(
      'INVALID_ARGS',
      `agents.run: unknown option ${unknown.map((key) => JSON.stringify(key)).join(', ')}; use prompt, tools, outputSchema, agent, label`,
    )
  const { prompt, tools, outputSchema, agent, label } = args
  if (typeof prompt !== 'string' || !prompt.trim()) throw new WorkflowError('INVALID_ARGS', 'agents.run requires a non-empty prompt string')
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((name) => typeof name === 'string')))
    throw new WorkflowError('INVALID_ARGS', 'agents.run: tools must be an array of tool names')
  if (agent !== undefined && typeof agent !== 'string') throw new WorkflowError('INVALID_ARGS', 'agents.run: agent must be a profile name')
  if (label !== undefined && typeof label !== 'string') throw new WorkflowError('INVALID_ARGS', 'agents.run: label must be a string')
  return {
    prompt,
    ...(tools !== undefined && { tools: tools as string[] }),
    ...(outputSchema !== undefined && { outputSchema: outputSchema as JsonSchemaNode }),
    ...(agent !== undefined && { agent }),
    ...(label !== undefined && { label }),
  }
}

const DESCRIPTION = `Run a JavaScript program that orchestrates subagents. Use it only when the user asks for a workflow or for large multi-agent fan-out; for one or two delegations, call subagent directly.
The program is an async function body, like run_code's: it can await tools.<name>(args) and, in addition,
  await agents.run({ prompt, tools?, outputSchema?, agent?, label? })
which runs one subagent to its end and resolves to its final text, or to the validated object when outputSchema (an object-rooted JSON Schema) is given; it throws when the subagent fails. Fan out with Promise.all. End with \`return <json>\`.`

/** The `workflow` tool. */
export function workflowTool(host: WorkflowHost): ToolDefinition {
  return defineTool({
    name: 'workflow',
    description: DESCRIPTION,
    parameters: Schema.object({ code: Schema.string().required().description('The program (JavaScript, async function body).') }),
    output: {
      schema: RunValue,
      render: (_args, value) => [
        { type: 'text', text: `workflow completed (${plural(value.agentsStarted, 'agent')}).\nReturn value:\n${resultText(value.result ?? null)}` },
      ],
    },
    async execute(args, exec) {
      const codeMode = host.codeMode()
      if (!codeMode) throw new WorkflowError('WORKFLOW_UNAVAILABLE', 'workflow needs Code Mode: load @cordage/plugin-code-mode')
      const subagents = host.subagents()
      if (!subagents) throw new WorkflowError('WORKFLOW_UNAVAILABLE', 'workflow needs the subagents service: load @cordage/plugin-subagent')
      host.nesting.enter(exec)
      const runId = `workflow-${randomUUID().slice(0, 8)}`
      const limiter = new Limiter(host.maxConcurrentAgents)
      let started = 0
      const run = async (raw: JsonValue, signal: AbortSignal): Promise<JsonValue> => {
        const options = childOptions(raw)
        if (started >= host.maxAgents) throw new WorkflowError('WORKFLOW_LIMIT', `this workflow already started ${host.maxAgents} agents (maxAgents)`)
        started++
        const caller = host.nesting.callerOf(exec, 'workflow', signal)
        const result = await limiter.run(() => subagents.run(options, caller), signal)
        return result.value !== undefined ? result.value : result.text
      }
      const output = await host.lifetime.run(exec.signal, (signal) =>
        codeMode.run({
          code: args.code,
          signal,
          parent: exec.token,
          ...(exec.agent !== undefined && { agent: exec.agent }),
          host: { 'agents.run': run },
        }),
      )
      return { runId, agentsStarted: started, result: output.result ?? null }
    },
  })
}
