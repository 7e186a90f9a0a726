import { Agent, SessionLog, resolveSessionFile, type AgentResult } from '@cordage/agent'
import { integerOption, stringOption } from '../args.js'
import { EXIT } from '../errors.js'
import { chooseModel, startModel } from '../model.js'
import { startRuntime, type Runtime } from '../runtime.js'
import type { RecordingModel } from '../cassette.js'
import type { Progress } from '../progress.js'
import type { CommandInput } from './command.js'
import { attachHuman } from './human-setup.js'

/** A runtime with a model, a session log and an agent ready to run. */
export interface AgentSession {
  runtime: Runtime
  agent: Agent
  session: SessionLog
  recorder?: RecordingModel
  /** Ends the session (`reason`: the stop reason, or `error`) and unloads everything. */
  close(end?: { reason: string; message?: string }): Promise<void>
}

export function defaultSystem(cwd: string): string {
  return `You are a coding agent working in the project at ${cwd}. Use the tools to read, search, change and test the code; check your work by running the project's tests before you finish. Answer concisely.`
}

/** Starts the runtime (plugins, then the model), opens or creates the session and builds the agent. */
export async function startAgent(input: CommandInput, progress: Progress): Promise<AgentSession> {
  const { values, cwd, output, env } = input
  const runtime = await startRuntime({ cwd, configFile: stringOption(values, 'config'), verbose: !!values.verbose, output })
  try {
    await attachHuman(runtime, input, progress)
    const flags = {
      model: stringOption(values, 'model'),
      baseURL: stringOption(values, 'base-url'),
      provider: stringOption(values, 'provider'),
      ...(values['no-key'] === true && { noKey: true }),
      cassette: stringOption(values, 'cassette'),
      record: stringOption(values, 'record'),
    }
    const choice = chooseModel(runtime.config.model, flags, cwd, runtime.config.baseDir, env)
    const { model, recorder } = await startModel(runtime, choice, flags.record)
    const resume = stringOption(values, 'resume')
    const store = runtime.ctx.get('sessions')
    // `--resume` also takes a session file's path, which only the JSONL files have.
    const byPath = resume !== undefined && (!store || (store.kind === 'jsonl' && /[\\/]|\.jsonl$/.test(resume)))
    const session = resume
      ? byPath
        ? SessionLog.open(resolveSessionFile(resume, { cwd }))
        : await SessionLog.openIn(store!, resume)
      : store
        ? SessionLog.createIn(store, { cwd, model: model.id })
        : SessionLog.create({ cwd, model: model.id })
    await session.ready
    if (runtime.config.agent.durability) session.durability = runtime.config.agent.durability
    for (const warning of session.warnings) output.error(output.style('yellow', `session: ${warning}`))
    const agent = new Agent(runtime.ctx, {
      model,
      system: stringOption(values, 'system') ?? runtime.config.agent.system ?? defaultSystem(cwd),
      maxTurns: integerOption(values, 'max-turns') ?? runtime.config.agent.maxTurns,
      session,
      onEvent: progress.onEvent,
      ...(runtime.config.agent.compaction && { compaction: runtime.config.agent.compaction }),
    })
    // Child runs report themselves on the context, whichever tool started them.
    runtime.ctx.on('agent/child', (event) => progress.child(event))
    // Every model request of every agent (the children's included) for their tokens and cost.
    runtime.ctx.on('agent/usage', (event) => progress.usage(event))
    // Nested calls (Code Mode) are not agent events; the registry reports them with their parent token.
    runtime.ctx.on('tools/result', (exec, result) => {
      if (exec.parent !== undefined) progress.nested(exec.name, result.isError, result.isError ? result.error.info?.code : undefined)
    })
    return {
      runtime,
      agent,
      session,
      recorder,
      async close(end) {
        await session.close(end ?? { reason: 'closed' })
        if (recorder) output.error(output.style('dim', `recorded ${recorder.turns.length} turns to ${recorder.file}`))
        await runtime.dispose()
      },
    }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}

/** Exit code of a finished run: only a completed run succeeds. */
export function exitCodeOf(result: AgentResult): number {
  if (result.stopReason === 'completed') return EXIT.ok
  return result.stopReason === 'aborted' ? 130 : EXIT.failed
}
