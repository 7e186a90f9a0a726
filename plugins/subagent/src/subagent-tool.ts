import Schema from 'schemastery'
import { defineTool, type JsonSchemaNode, type ToolDefinition } from '@cordage/core'
import type { ChildRunCaller, ChildRunOptions, ChildRunResult, JobsService } from '@cordage/services'
import { SubagentError } from './errors.js'
import { labelOf, type AgentProfile, type ChildRuns } from './runs.js'

const Parameters = Schema.object({
  prompt: Schema.string().required().description('The task. The subagent does not see this conversation: make it self-contained.'),
  agent: Schema.string().description('A configured agent profile (system prompt, tools, turn limit).'),
  tools: Schema.array(Schema.string()).description("Tool names the subagent may use (default: the profile's, else all you may use)."),
  outputSchema: Schema.dict(Schema.any()).description('An object-rooted JSON Schema: the subagent must report a matching object, returned as output[0].'),
  background: Schema.boolean().description('Run as a background job: returns a job id at once; read it with job_output, stop it with job_kill.'),
})

const Value = Schema.union([
  Schema.object({
    kind: Schema.const('foreground' as const).required(),
    runId: Schema.string().required(),
    output: Schema.array(Schema.any()).required().description('The structured object, or one text block with the final message.'),
  }),
  Schema.object({ kind: Schema.const('background' as const).required(), jobId: Schema.string().required() }),
])

function describe(profiles: Record<string, AgentProfile>): string {
  const names = Object.entries(profiles)
    .map(([name, profile]) => `\n- ${name}: ${profile.description}`)
    .join('')
  return (
    'Delegate a self-contained task to a subagent: a separate agent with its own context that does not see this conversation, ' +
    'working with a subset of your tools under the same policy. Several subagent calls in one message run in parallel. ' +
    'With outputSchema, the subagent returns a validated object. Set background: true to get a job id and keep working.' +
    (names ? `\nAgent profiles:${names}` : '')
  )
}

function foreground(result: ChildRunResult) {
  return { kind: 'foreground' as const, runId: result.runId, output: [result.value !== undefined ? result.value : { type: 'text', text: result.text }] }
}

/** The `subagent` tool: foreground runs return the child's output; background runs become jobs. */
export function subagentTool(runs: ChildRuns, profiles: Record<string, AgentProfile>, jobs: () => JobsService | undefined): ToolDefinition {
  return defineTool({
    name: 'subagent',
    description: describe(profiles),
    parameters: Parameters,
    concurrency: 'parallel',
    output: {
      schema: Value,
      render(args, value) {
        if (value.kind === 'background') return [{ type: 'text', text: `started background subagent job ${value.jobId}` }]
        const [first] = value.output
        const text =
          args.outputSchema === undefined && first && typeof first === 'object' && !Array.isArray(first) && typeof first.text === 'string'
            ? first.text
            : JSON.stringify(first ?? null, null, 2)
        return [{ type: 'text', text }]
      },
    },
    // Not async: a foreground call returns the run's own promise, shaped into the value inside it.
    execute(args, exec) {
      // Plain assignments rather than conditional spreads: this runs once per child round trip.
      const options: ChildRunOptions = { prompt: args.prompt }
      if (args.agent !== undefined) options.agent = args.agent
      if (args.tools) options.tools = args.tools
      if (args.outputSchema) options.outputSchema = args.outputSchema as JsonSchemaNode
      const caller: ChildRunCaller = { callId: exec.callId, tool: 'subagent', signal: exec.signal, root: exec.parent ?? exec.token }
      if (exec.agent !== undefined) caller.agent = exec.agent
      if (!args.background) return runs.run(options, caller, foreground)
      const service = jobs()
      if (!service)
        throw new SubagentError('JOBS_UNAVAILABLE', 'background subagents need the jobs service: load @cordage/plugin-jobs, or call without background')
      const controller = new AbortController()
      let settled: Promise<void> = Promise.resolve()
      // The job belongs to the calling agent: its siblings and its own children cannot read or kill it.
      const handle = service.start({ kind: 'subagent', title: labelOf(args.prompt), agent: exec.agent, kill: () => (controller.abort(), settled) })
      // A background child outlives this call: only its job's kill stops it.
      caller.signal = controller.signal
      settled = runs.run(options, caller).then(
        (result) => {
          handle.write(result.value !== undefined ? JSON.stringify(result.value, null, 2) : result.text)
          handle.exit({ exitCode: 0 })
        },
        (error: unknown) => handle.fail(error),
      )
      return { kind: 'background' as const, jobId: handle.id }
    },
  })
}
