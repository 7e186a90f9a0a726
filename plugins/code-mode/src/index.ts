import { symbols, type Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig } from '@cordage/core'
import { createRunCode, RUN_CODE } from './run-code.js'
import { loadModule } from './module.js'
import { Catalog } from './catalog.js'
import type { SandboxLimits } from './sandbox.js'

export { CodeRunError, type CodeRunFailureKind } from './errors.js'
export { generateSdk, type SdkTool } from './sdk.js'
export { RUN_CODE, renderRunCode } from './run-code.js'
export type { ProgramOutput, SandboxLimits } from './sandbox.js'

/** Plugin name. */
export const name = 'code-mode'
/** `run_code` dispatches through the registry. */
export const inject = ['tools']

/** Per-run sandbox limits and the tools hidden from programs (see the README table). */
export interface Config extends SandboxLimits {
  exclude: string[]
}

/** Validated at load; defaults as in the README. */
export const Config: Schema<Partial<Config>, Config> = strictConfig(name, Schema.object({
  memoryBytes: Schema.natural().min(1 << 20).default(32 << 20).description('Heap limit of one run (bytes).'),
  stackBytes: Schema.natural().min(64 << 10).max(384 << 10).default(256 << 10).description('Stack limit of one run (bytes); deeper recursion throws a catchable error. WASM frames share the host thread stack, hence the low ceiling.'),
  cpuTimeMs: Schema.natural().min(1).default(5000).description('CPU time one run may spend executing JavaScript (time waiting for tools is not counted).'),
  timeoutMs: Schema.natural().min(1).default(60_000).description('Wall-clock limit of one run, tool calls included.'),
  maxOutputBytes: Schema.natural().min(1).default(65_536).description('UTF-8 bytes of logs plus the JSON of the result one run may produce.'),
  maxCalls: Schema.natural().min(1).default(5000).description('Tool calls one run may make.'),
  exclude: Schema.array(Schema.string()).default([]).description('Tools hidden from programs (run_code itself always is).'),
})) as any

/** Registers `run_code`; its SDK follows the registered tools (rebuilt lazily after `tools/changed`). */
export function apply(ctx: Context, config: Config): void {
  // The raw service, not the Context-bound proxy: property reads through the proxy cost microseconds
  // each, and the catalog is consulted per nested call.
  const service = ctx.get('tools')!
  const registry: typeof service = (service as any)[symbols.original] ?? service
  const catalog = new Catalog(registry, new Set([RUN_CODE, ...config.exclude]))
  ctx.on('tools/changed', () => catalog.invalidate())

  // Start compiling the WASM module now so the first run does not pay for it.
  loadModule().catch((error: unknown) => ctx.logger('code-mode').warn(`could not load the QuickJS module: ${error}`))
  ctx.tools.register(createRunCode({
    execute: registry.execute,
    isParallel: (name, args) => catalog.isParallel(name, args),
    catalog: () => catalog.current(),
  }, config))
}

/** The plugin object, for loaders that import the default export. */
export default { name, inject, Config, apply }
