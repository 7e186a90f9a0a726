import {
  CordageError,
  ToolAbortedBeforeDispatchError,
  ToolArgsError,
  UnknownToolError,
  failure,
  type JsonValue,
  type ToolExecutionResult,
  errorMessage,
} from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { AgentEvent } from './agent-types.js'
import type { ToolCall } from './model.js'

/** What a batch needs from its agent. */
export interface BatchHost {
  tools: ToolRegistry
  signal?: AbortSignal
  agent?: string
  /** The tool names this agent was offered; a call outside them fails without dispatch. Default: no filter. */
  offered?: ReadonlySet<string>
  emit(event: AgentEvent): void
  /** Called once per call, in model order. */
  commit(call: ToolCall, result: ToolExecutionResult): void
}

type Parsed = { ok: true; args: JsonValue } | { ok: false; result: ToolExecutionResult }

/** Parses the model's argument text; empty text means `{}` (some providers send '' for no-argument calls). */
export function parseArguments(call: ToolCall): Parsed {
  const source = call.arguments.trim() === '' ? '{}' : call.arguments
  try {
    return { ok: true, args: JSON.parse(source) as JsonValue }
  } catch (error) {
    const reason = errorMessage(error)
    const message = `the arguments of ${call.name} are not valid JSON (${reason}); send one JSON object matching the tool's parameters`
    return { ok: false, result: failure(new ToolArgsError(message, [], { cause: error })) }
  }
}

function isParallel(tools: ToolRegistry, call: ToolCall, parsed: Parsed): boolean {
  // A call that failed to parse never dispatches, so it cannot conflict with anything.
  if (!parsed.ok) return true
  const concurrency = tools.get(call.name)?.concurrency
  if (concurrency === 'parallel') return true
  if (typeof concurrency !== 'function') return false
  try {
    return concurrency(parsed.args) === true
  } catch {
    return false
  }
}

/**
 * Runs one model turn's calls: consecutive parallel-safe calls together, each exclusive call alone as a
 * barrier. Results are committed in model order as soon as every earlier call has committed. Once the
 * signal aborts, calls not yet started get `ABORTED_BEFORE_DISPATCH` results.
 */
export async function runBatch(host: BatchHost, calls: readonly ToolCall[]): Promise<ToolExecutionResult[]> {
  const { tools, signal } = host
  const parsed = calls.map((call): Parsed => {
    if (host.offered && !host.offered.has(call.name)) {
      return { ok: false, result: failure(new UnknownToolError(call.name, [...host.offered], 'is not available to this agent')) }
    }
    return parseArguments(call)
  })
  const results: Array<ToolExecutionResult | undefined> = Array.from({ length: calls.length })
  let committed = 0
  const settle = (index: number, result: ToolExecutionResult) => {
    results[index] = result
    while (committed < calls.length && results[committed]) {
      host.commit(calls[committed], results[committed]!)
      committed++
    }
  }
  const runOne = async (index: number): Promise<void> => {
    const call = calls[index]
    const input = parsed[index]
    const started = performance.now()
    host.emit({ type: 'tool/start', callId: call.id, name: call.name, arguments: call.arguments })
    let result: ToolExecutionResult
    if (!input.ok) result = input.result
    else if (signal?.aborted) result = failure(new ToolAbortedBeforeDispatchError())
    else {
      try {
        result = await tools.execute({ name: call.name, arguments: input.args, callId: call.id, signal, agent: host.agent })
      } catch (error) {
        // The registry never rejects by contract; a rejection here is a wiring fault, still shown as a result.
        result = failure(CordageError.is(error) ? error : new CordageError('TOOL_FAILED', errorMessage(error)))
      }
    }
    const code = result.isError ? result.error.info?.code : undefined
    host.emit({
      type: 'tool/end',
      callId: call.id,
      name: call.name,
      isError: result.isError,
      ...(code !== undefined && { code }),
      durationMs: performance.now() - started,
      content: result.content,
    })
    settle(index, result)
  }
  let index = 0
  while (index < calls.length) {
    let end = index + 1
    if (isParallel(tools, calls[index], parsed[index])) {
      while (end < calls.length && isParallel(tools, calls[end], parsed[end])) end++
    }
    if (end - index === 1) await runOne(index)
    else {
      const group: Promise<void>[] = []
      for (let member = index; member < end; member++) group.push(runOne(member))
      await Promise.all(group)
    }
    index = end
  }
  return results as ToolExecutionResult[]
}
