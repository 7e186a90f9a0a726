import { availableParallelism } from 'node:os'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig } from '@cordage/core'
import type { CodeRunner } from '@cordage/services'
import { createRunCode, RUN_CODE } from './run-code.js'
import { Catalog } from './catalog.js'
import type { SandboxLimits } from './budget.js'
import { SandboxPool } from './pool.js'
import { CodeModeRunner } from './service.js'

export { CodeRunError, CodeSessionError, HostFunctionError, type CodeRunFailureKind } from './errors.js'
export type { ProgramOutput } from './sandbox.js'
export type { SandboxLimits } from './budget.js'

/** Plugin name. */
export const name = 'code-mode'
/** `run_code` dispatches through the registry. Provides `codeMode` (`CodeRunner`, declared in `@cordage/services`). */
export const inject = ['tools']

/** Per-run sandbox limits, the warm worker count, and the tools hidden from programs (see the README table). */
export interface Config extends SandboxLimits {
  poolSize: number
  spinMicros: number
  exclude: string[]
}

/** Validated at load; defaults as in the README. */
export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    memoryBytes: Schema.natural()
      .min(1 << 20)
      .default(32 << 20)
      .description('Heap limit of one run (bytes).'),
    stackBytes: Schema.natural()
      .min(64 << 10)
      .max(384 << 10)
      .default(256 << 10)
      .description(
        'Stack limit of one run (bytes); deeper recursion throws a catchable error. WASM frames share the host thread stack, hence the low ceiling.',
      ),
    cpuTimeMs: Schema.natural().min(1).default(5000).description('CPU time one run may spend executing JavaScript (time waiting for tools is not counted).'),
    timeoutMs: Schema.natural().min(1).default(60_000).description('Wall-clock limit of one run, tool calls included.'),
    maxOutputBytes: Schema.natural().min(1).default(65_536).description('UTF-8 bytes of logs plus the JSON of the result one run may produce.'),
    maxCalls: Schema.natural().min(1).default(5000).description('Tool calls one run may make.'),
    poolSize: Schema.natural().min(1).max(16).default(2).description('Warm sandbox worker threads kept ready (more start on demand while all are busy).'),
    spinMicros: Schema.natural()
      .max(1000)
      .default(250)
      .description(
        "How long the host spins for a worker's quick answer (µs); a waiting worker spins 4× as long, at most 1 ms; 0 never spins. Ignored on a single CPU.",
      ),
    exclude: Schema.array(Schema.string()).default([]).description('Tools hidden from programs (run_code itself always is).'),
  }),
)

/** Registers `run_code`; its SDK follows the registered tools (rebuilt lazily after `tools/changed`). */
export function apply(ctx: Context, config: Config): void {
  // Held as given: `ctx.tools`'s `execute`, `get` and `list` are the registry's own (see its README).
  const registry = ctx.tools
  const catalog = new Catalog(registry, new Set([RUN_CODE, ...config.exclude]))
  ctx.on('tools/changed', () => catalog.invalidate())

  const limits: SandboxLimits = {
    memoryBytes: config.memoryBytes,
    stackBytes: config.stackBytes,
    cpuTimeMs: config.cpuTimeMs,
    timeoutMs: config.timeoutMs,
    maxOutputBytes: config.maxOutputBytes,
    maxCalls: config.maxCalls,
  }
  // Spinning only pays when the two threads can run at once.
  const pool = new SandboxPool(config.poolSize, limits, availableParallelism() > 1 ? config.spinMicros : 0)
  // Unloading terminates every worker, busy ones included; their runs end ABORTED.
  ctx.effect(() => {
    pool.warm()
    return () => pool.dispose()
  }, 'code-mode: sandbox workers')
  const runner: CodeRunner = new CodeModeRunner(
    pool,
    {
      execute: registry.execute,
      isParallel: (name, args) => catalog.isParallel(name, args),
      catalog: () => catalog.current(),
      describe: (name) => catalog.describe(name),
    },
    limits,
  )
  ctx.tools.register(createRunCode(runner, () => catalog.current().sdk, limits))
  ctx.provide('codeMode', runner)
}

/** The plugin object, for loaders that import the default export. */
export default { name, inject, Config, apply }
