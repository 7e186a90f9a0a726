import { toJsonValue, type JsonValue, type ToolExecutionResult } from '@cordage/core'
import type { ExecuteInput } from '@cordage/registry'
import type { CodeHostFunction, CodeRunner, CodeRunOptions, CodeRunResult } from '@cordage/services'
import type { SandboxLimits } from './budget.js'
import type { CatalogSnapshot } from './catalog.js'
import { HostFunctionError } from './errors.js'
import type { SandboxPool } from './pool.js'
import type { CallOutcome } from './protocol.js'
import { runProgram } from './sandbox.js'
import { CallScheduler } from './scheduler.js'

/** What programs reach through the registry: dispatch, concurrency rules, and the bindable tools. */
export interface ToolAccess {
  execute(input: ExecuteInput): Promise<ToolExecutionResult>
  isParallel(name: string, args: JsonValue): boolean
  catalog(): CatalogSnapshot
}

const HOST_PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/
// The prelude's own globals, and the global properties that cannot be redefined.
const RESERVED = new Set(['tools', 'console', 'ToolCallError', 'globalThis', 'undefined', 'NaN', 'Infinity'])

/** Checks `host` keys: dotted identifiers, no reserved root, no key that is a property path of another. */
function hostFunctions(host: Record<string, CodeHostFunction>): Map<string, CodeHostFunction> {
  const paths = new Map<string, CodeHostFunction>()
  for (const [path, fn] of Object.entries(host)) {
    if (!HOST_PATH.test(path)) throw new HostFunctionError(`host function "${path}" is not a dotted identifier path (e.g. "agents.run")`)
    const parts = path.split('.')
    if (RESERVED.has(parts[0]!)) throw new HostFunctionError(`host function "${path}" would replace the program's "${parts[0]}"`)
    if (typeof fn !== 'function') throw new HostFunctionError(`host function "${path}" is not a function`)
    paths.set(path, fn)
  }
  for (const path of paths.keys()) {
    const parts = path.split('.')
    for (let length = 1; length < parts.length; length++) {
      const prefix = parts.slice(0, length).join('.')
      if (paths.has(prefix)) throw new HostFunctionError(`host functions "${prefix}" and "${path}" overlap: one is a property of the other`)
    }
  }
  return paths
}

const outcomeOf = (result: ToolExecutionResult): CallOutcome =>
  result.isError ? { ok: false, message: result.error.message } : { ok: true, json: JSON.stringify(result.value) }

async function callHost(fn: CodeHostFunction, args: JsonValue, signal: AbortSignal): Promise<CallOutcome> {
  try {
    return { ok: true, json: JSON.stringify(toJsonValue(await fn(args, signal))) }
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) }
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
        // The prelude only queues bound names; anything else is refused rather than dispatched.
        if (wire.startsWith(':') || !bound.has(wire)) return Promise.resolve({ ok: false, message: `${wire} is not available to programs` })
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
      hostNames: [...host.keys()],
      scheduler,
      ...(signal && { signal }),
    })
  }
}
