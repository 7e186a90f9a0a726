// @ts-check
// The crossings into a sandbox's VM that every nested tool call makes: settle a completion, run the
// promise jobs, drain the outbox. Plain JavaScript: the worker imports it from src/ and dist/ alike.
//
// Through quickjs-emscripten's API each crossing builds handle and result objects (time, and garbage
// whose GC pauses in the worker then outlast spin windows; figures in the README). The raw lane calls the
// QuickJS build's own entry points instead. They are the library's protected members, so the lane is
// used only when every one is present (the library is pinned to an exact version); otherwise the
// crossings go through the public API, with the same results but one: when malloc fails for a
// completion's text, the API writes it at address 0 and the interpreter aborts (a coded `aborted`
// failure, the worker replaced), where the raw lane reports `out of memory`.

/** @typedef {import('quickjs-emscripten').QuickJSHandle} QuickJSHandle */
/** @typedef {import('quickjs-emscripten').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten').QuickJSRuntime} QuickJSRuntime */
/**
 * @typedef {object} Lane
 * @property {boolean} raw Whether this lane calls the entry points directly.
 * @property {(completion: string) => string | undefined} settle Settles one call (`<id>\n1<json>` or `<id>\n0<failure json>`); what it threw, described.
 * @property {() => string | undefined} jobs Runs the pending promise jobs; the uncaught error they threw, described.
 * @property {() => string | { problem: string }} drain The drained outbox (prelude `drain`), or what draining threw.
 * @property {() => void} close Frees what the lane allocated (before the context is disposed).
 */
/** @typedef {{ runtime: QuickJSRuntime, context: QuickJSContext, helpers: QuickJSHandle[] }} LaneSandbox */

const SETTLE = 1
const DESCRIBE = 3
const DRAIN = 4
const UNDESCRIBABLE = 'Uncaught (the error could not be described)'
const ENTRY_POINTS = [
  'QTS_Call',
  'QTS_ResolveException',
  'QTS_NewString',
  'QTS_GetString',
  'QTS_FreeCString',
  'QTS_FreeValuePointer',
  'QTS_FreeValuePointerRuntime',
  'QTS_ExecutePendingJob',
  'QTS_Typeof',
]

/** Keeps the first lines of a long error description (deep recursion gives thousands of frames). @param {string} text */
export function clip(text, maxLines = 12) {
  const lines = text.split('\n')
  return lines.length <= maxLines ? text : `${lines.slice(0, maxLines).join('\n')}\n    ... ${lines.length - maxLines} more lines`
}

/** Describes a thrown VM value with the prelude's `describe`, and disposes it. @param {LaneSandbox} sandbox @param {QuickJSHandle} error */
export function describeHandle(sandbox, error) {
  const { context, helpers } = sandbox
  const described = context.callFunction(helpers[DESCRIBE], context.undefined, error)
  error.dispose()
  if (described.error) {
    described.error.dispose()
    return UNDESCRIBABLE
  }
  return clip(described.value.consume((handle) => context.getString(handle)))
}

/** The raw lane when the library's entry points are all there, else the public-API one. @param {LaneSandbox} sandbox @param {boolean} [raw] */
export function openLane(sandbox, raw = true) {
  return (raw && rawLane(sandbox)) || apiLane(sandbox)
}

/** @param {LaneSandbox} sandbox @returns {Lane} */
function apiLane(sandbox) {
  const { context, runtime, helpers } = sandbox
  return {
    raw: false,
    settle(completion) {
      const payload = context.newString(completion)
      const settled = context.callFunction(helpers[SETTLE], context.undefined, payload)
      payload.dispose()
      if (settled.error) return describeHandle(sandbox, settled.error)
      settled.value.dispose()
      return undefined
    },
    jobs() {
      const jobs = runtime.executePendingJobs()
      return jobs.error ? describeHandle(sandbox, jobs.error) : undefined
    },
    drain() {
      const drained = context.callFunction(helpers[DRAIN], context.undefined)
      if (drained.error) return { problem: describeHandle(sandbox, drained.error) }
      return drained.value.consume((handle) => context.getString(handle))
    },
    close() {},
  }
}

/** @param {LaneSandbox} sandbox @returns {Lane | undefined} */
function rawLane(sandbox) {
  const internals = /** @type {any} */ (sandbox.context)
  const { ffi, module } = internals
  const ctx = internals.ctx?.value
  const rt = /** @type {any} */ (sandbox.runtime).rt?.value
  if (!ffi || !module || typeof ctx !== 'number' || typeof rt !== 'number') return undefined
  if (ENTRY_POINTS.some((name) => typeof ffi[name] !== 'function')) return undefined
  if (![module._malloc, module._free, module.lengthBytesUTF8, module.stringToUTF8, module.UTF8ToString].every((fn) => typeof fn === 'function'))
    return undefined
  // Bytes 0–3: the one argument pointer of a call; 4–7: the context a job ran in.
  const scratch = module._malloc(8)
  if (!scratch) return undefined
  const undefinedValue = sandbox.context.undefined.value
  const [settleFn, describeFn, drainFn] = [SETTLE, DESCRIBE, DRAIN].map((index) => sandbox.helpers[index].value)

  /** @param {number} at */
  const readPointer = (at) => {
    const heap = module.HEAPU8
    return (heap[at] | (heap[at + 1] << 8) | (heap[at + 2] << 16) | (heap[at + 3] << 24)) >>> 0
  }
  /** @param {number} at @param {number} value */
  const writePointer = (at, value) => {
    const heap = module.HEAPU8
    heap[at] = value & 255
    heap[at + 1] = (value >>> 8) & 255
    heap[at + 2] = (value >>> 16) & 255
    heap[at + 3] = value >>> 24
  }
  /** A call of `fn` with at most one argument: the result's pointer, or the thrown value's. @param {number} fn @param {number} [arg] */
  const call = (fn, arg) => {
    if (arg) writePointer(scratch, arg)
    const result = ffi.QTS_Call(ctx, fn, undefinedValue, arg ? 1 : 0, scratch)
    const error = ffi.QTS_ResolveException(ctx, result)
    if (!error) return { result }
    ffi.QTS_FreeValuePointer(ctx, result)
    return { error }
  }
  /** @param {number} value */
  const text = (value) => {
    const chars = ffi.QTS_GetString(ctx, value)
    const string = module.UTF8ToString(chars)
    ffi.QTS_FreeCString(ctx, chars)
    return string
  }
  /** Describes a thrown value and frees it. @param {number} error */
  const describe = (error) => {
    const described = call(describeFn, error)
    ffi.QTS_FreeValuePointer(ctx, error)
    if (described.error) {
      ffi.QTS_FreeValuePointer(ctx, described.error)
      return UNDESCRIBABLE
    }
    const string = text(described.result)
    ffi.QTS_FreeValuePointer(ctx, described.result)
    return clip(string)
  }

  return {
    raw: true,
    settle(completion) {
      const size = module.lengthBytesUTF8(completion) + 1
      const chars = module._malloc(size)
      // The library writes to address 0 when malloc fails; the lane reports it.
      if (!chars) return 'InternalError: out of memory'
      module.stringToUTF8(completion, chars, size)
      const payload = ffi.QTS_NewString(ctx, chars)
      module._free(chars)
      const failed = ffi.QTS_ResolveException(ctx, payload)
      if (failed) {
        ffi.QTS_FreeValuePointer(ctx, payload)
        return describe(failed)
      }
      const outcome = call(settleFn, payload)
      ffi.QTS_FreeValuePointer(ctx, payload)
      if (outcome.error) return describe(outcome.error)
      ffi.QTS_FreeValuePointer(ctx, outcome.result)
      return undefined
    },
    jobs() {
      const value = ffi.QTS_ExecutePendingJob(rt, -1, scratch + 4)
      const jobContext = readPointer(scratch + 4)
      if (jobContext === 0) {
        ffi.QTS_FreeValuePointerRuntime(rt, value)
        return undefined
      }
      // The number of jobs run, or the error one threw (in this sandbox's only context).
      const typeName = ffi.QTS_Typeof(jobContext, value)
      const kind = module.UTF8ToString(typeName)
      module._free(typeName)
      if (kind !== 'number') return describe(value)
      ffi.QTS_FreeValuePointer(jobContext, value)
      return undefined
    },
    drain() {
      const outcome = call(drainFn)
      if (outcome.error) return { problem: describe(outcome.error) }
      const string = text(outcome.result)
      ffi.QTS_FreeValuePointer(ctx, outcome.result)
      return string
    },
    close() {
      module._free(scratch)
    },
  }
}
