import type { JsonValue, ToolExecutionResult } from '@cordage/core'
import type { ExecuteInput } from '@cordage/registry'
import type { CodeHostFunction, CodeRunner, CodeRunOptions, CodeRunResult, CodeSession, CodeSessionOptions } from '@cordage/services'
import type { SandboxLimits } from './budget.js'
import type { CatalogSnapshot } from './catalog.js'
import { callHost, hostFunctions } from './host-functions.js'
import type { SandboxPool } from './pool.js'
import { failedOutcome, thrownOutcome, type CallOutcome } from './protocol.js'
import { runProgram } from './sandbox.js'
import { CallScheduler } from './scheduler.js'
import { openSession } from './session.js'

const outcomeOf = (result: ToolExecutionResult): CallOutcome =>
  result.isError ? failedOutcome(result.error) : { ok: true, json: JSON.stringify(result.value) }

/** What programs reach through the registry: dispatch, concurrency rules, and the bindable tools. */
export interface ToolAccess {
  execute(input: ExecuteInput): Promise<ToolExecutionResult>
  isParallel(name: string, args: JsonValue): boolean
  catalog(): CatalogSnapshot
  /** A visible tool's full declaration with docs (throws `UNKNOWN_TOOL` for any other name). */
  describe(name: JsonValue): string
}

// `describeTool(name)` in a program: bound like a host function, answered from the catalog.
const DESCRIBE_WIRE = ':describeTool'

function describeOutcome(access: ToolAccess, name: JsonValue): Promise<CallOutcome> {
  try {
    return Promise.resolve({ ok: true, json: JSON.stringify(access.describe(name)) })
  } catch (error) {
    return Promise.resolve(thrownOutcome(error))
  }
}

/**
 * The `codeMode` service: runs programs in the pooled sandbox with the visible tools bound on `tools`
 * (every call through the full registry pipeline) and the caller's host functions as extra globals.
 * `run_code` is one caller of it.
 */
export class CodeModeRunner implements CodeRunner {
  constructor(
    private readonly pool: SandboxPool,
    private readonly access: ToolAccess,
    private readonly limits: SandboxLimits,
  ) {}

  run(options: CodeRunOptions): Promise<CodeRunResult> {
    const { parent, agent, signal } = options
    let host: Map<string, CodeHostFunction>
    try {
      host = hostFunctions(options.host ?? {})
    } catch (error) {
      return Promise.reject(error)
    }
    const { names } = this.access.catalog()
    const bound = new Set(names)
    const scheduler = new CallScheduler(
      (wire, args, callSignal) => {
        const hostFunction = wire.startsWith(':') ? host.get(wire.slice(1)) : undefined
        if (hostFunction) return callHost(hostFunction, args, callSignal)
        if (wire === DESCRIBE_WIRE) return describeOutcome(this.access, args)
        // The prelude only queues bound names; anything else is refused rather than dispatched.
        if (wire.startsWith(':') || !bound.has(wire))
          return Promise.resolve({ ok: false, message: `${wire} is not available to programs`, code: 'UNKNOWN_TOOL' })
        return this.access
          .execute({ name: wire, arguments: args, signal: callSignal, ...(parent !== undefined && { parent }), ...(agent !== undefined && { agent }) })
          .then(outcomeOf)
      },
      (wire, args) => wire.startsWith(':') || this.access.isParallel(wire, args),
    )
    return runProgram(this.pool, {
      code: options.code,
      limits: this.limits,
      toolNames: names,
      hostNames: [...host.keys(), 'describeTool'],
      scheduler,
      ...(signal && { signal }),
    })
  }

  open(options: CodeSessionOptions = {}): Promise<CodeSession> {
    return openSession(this.pool, this.limits, options)
  }
}
