import { symbols, type Context } from 'cordis'
import Schema from 'schemastery'
import type { JsonValue } from '@cordage/core'
import { createRunCode, RUN_CODE } from './run-code.js'
import { loadModule } from './module.js'
import { generateSdk } from './sdk.js'

export { CodeRunError, type CodeRunFailureKind } from './errors.js'
export { generateSdk, type SdkTool } from './sdk.js'
export { RUN_CODE, renderRunCode } from './run-code.js'
export type { ProgramOutput, SandboxLimits } from './sandbox.js'

export const name = 'code-mode'
export const inject = ['tools']

export interface Config {
  memoryBytes: number
  stackBytes: number
  cpuTimeMs: number
  timeoutMs: number
  maxOutputBytes: number
  maxCalls: number
  exclude: string[]
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  memoryBytes: Schema.natural().min(1 << 20).default(32 << 20).description('Heap limit of one run (bytes).'),
  stackBytes: Schema.natural().min(64 << 10).max(384 << 10).default(256 << 10).description('Stack limit of one run (bytes); deeper recursion throws a catchable error. WASM frames share the host thread stack, hence the low ceiling.'),
  cpuTimeMs: Schema.natural().min(1).default(5000).description('CPU time one run may spend executing JavaScript (time waiting for tools is not counted).'),
  timeoutMs: Schema.natural().min(1).default(60_000).description('Wall-clock limit of one run, tool calls included.'),
  maxOutputBytes: Schema.natural().min(1).default(65_536).description('UTF-8 bytes of logs plus the JSON of the result one run may produce.'),
  maxCalls: Schema.natural().min(1).default(5000).description('Tool calls one run may make.'),
  exclude: Schema.array(Schema.string()).default([]).description('Tools hidden from programs (run_code itself always is).'),
}) as any

/** Registers `run_code`; its SDK follows the registered tools (regenerated lazily after `tools/changed`). */
export function apply(ctx: Context, config: Config): void {
  // The raw service, not the Context-bound proxy: property reads through the proxy cost microseconds
  // each, and isParallel runs per nested call.
  const service = ctx.get('tools')!
  const registry: typeof service = (service as any)[symbols.original] ?? service
  const execute = registry.execute
  const hidden = new Set([RUN_CODE, ...config.exclude])
  let catalog: { names: string[]; sdk: string } | undefined
  let building = false

  // list() reads run_code's description getter, which reads the catalog: while building, the getter
  // sees the previous (or empty) catalog instead of recursing.
  const current = (): { names: readonly string[]; sdk: string } => {
    if (catalog) return catalog
    if (building) return { names: [], sdk: '' }
    building = true
    try {
      const visible = registry.list().filter((tool) => !hidden.has(tool.name))
      catalog = { names: visible.map((tool) => tool.name), sdk: generateSdk(visible) }
      return catalog
    } finally {
      building = false
    }
  }
  ctx.on('tools/changed', () => {
    catalog = undefined
  })

  const isParallel = (toolName: string, args: JsonValue): boolean => {
    const concurrency = registry.get(toolName)?.concurrency
    return concurrency === 'parallel' || (typeof concurrency === 'function' && concurrency(args) === true)
  }

  // Start compiling the WASM module now so the first run does not pay for it.
  loadModule().catch((error: unknown) => ctx.logger('code-mode').warn(`could not load the QuickJS module: ${error}`))
  ctx.tools.register(createRunCode({ execute, isParallel, catalog: current }, config))
}
