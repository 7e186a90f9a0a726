import { newQuickJSWASMModule, type QuickJSWASMModule } from 'quickjs-emscripten'
import { PRELUDE } from './prelude.js'

// One WASM module serves every run (each run gets its own runtime and context). A module that threw
// from inside WASM is dropped so the next run loads a fresh one.
let shared: Promise<QuickJSWASMModule> | undefined

/** Loads (once) the QuickJS WASM module shared by all runs. */
export function loadModule(): Promise<QuickJSWASMModule> {
  shared ??= newQuickJSWASMModule().then(warmUp).catch((error: unknown) => {
    shared = undefined
    throw error
  })
  return shared
}

// V8 compiles WASM lazily and tiers it up while it runs: one throwaway run of the prelude makes the
// first real run fast (and keeps compile time out of its CPU budget).
function warmUp(module: QuickJSWASMModule): QuickJSWASMModule {
  const runtime = module.newRuntime()
  const context = runtime.newContext()
  try {
    const setup = context.unwrapResult(context.evalCode(PRELUDE, 'prelude.js'))
    const host = context.newFunction('host', () => undefined)
    const names = context.newString('["warm"]')
    context.unwrapResult(context.callFunction(setup, context.undefined, host, names)).dispose()
    for (const handle of [names, host, setup]) handle.dispose()
    context.unwrapResult(context.evalCode('(async () => { let n = 0; for (let i = 0; i < 2000; i++) n += JSON.stringify({ i }).length; return n })()')).dispose()
    runtime.executePendingJobs()
  } finally {
    context.dispose()
    runtime.dispose()
  }
  return module
}

/** Forgets `module` (a run found it broken) so the next run loads a fresh one. */
export function dropModule(module: Promise<QuickJSWASMModule>): void {
  if (shared === module) shared = undefined
}
