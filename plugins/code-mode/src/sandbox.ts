import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten'
import { ToolAbortedError, type JsonValue } from '@cordage/core'
import { CodeRunError, type CodeRunFailureKind } from './errors.js'
import { dropModule, loadModule } from './module.js'
import { PRELUDE } from './prelude.js'
import type { CallOutcome, CallScheduler } from './scheduler.js'

/** The per-run limits; each breach ends the run with a `CodeRunError` of the matching kind. */
export interface SandboxLimits {
  memoryBytes: number
  stackBytes: number
  cpuTimeMs: number
  timeoutMs: number
  maxOutputBytes: number
  maxCalls: number
}

/** What a completed program produced. */
export interface ProgramOutput {
  logs: string[]
  result?: JsonValue
}

export interface RunOptions {
  code: string
  limits: SandboxLimits
  /** Tool names bound on `tools` inside the program. */
  toolNames: readonly string[]
  scheduler: CallScheduler
  /** Aborting ends the run (the caller cancelled); `runProgram` then rejects with `ToolAbortedError`. */
  signal?: AbortSignal
}

const LIMIT_DETAIL: Record<string, (limits: SandboxLimits) => string> = {
  cpu: (l) => `the program used more than ${l.cpuTimeMs} ms of CPU time and was stopped (an endless loop?)`,
  timeout: (l) => `the program did not finish within ${l.timeoutMs} ms and was stopped`,
  memory: (l) => `the program exceeded the memory limit of ${l.memoryBytes} bytes`,
  calls: (l) => `the program made more than ${l.maxCalls} tool calls`,
  output: (l) => `the program's logs and result exceeded ${l.maxOutputBytes} bytes`,
}

/**
 * Runs `code` as the body of an async function in a fresh QuickJS runtime and context, pumping its
 * promise jobs from the host: tool calls go through `scheduler`, whose outcomes settle the program's
 * promises. Resolves with the logs and JSON result, or rejects with `CodeRunError`. Outstanding calls
 * are aborted and drained before it settles.
 */
export async function runProgram(options: RunOptions): Promise<ProgramOutput> {
  const { limits, scheduler, signal } = options
  const current = loadModule()
  const module = await current
  let broken = false
  const logs: string[] = []
  let outputBytes = 0
  let calls = 0
  let failure: { kind: CodeRunFailureKind; detail: string } | undefined
  let cancelled = false
  const fail = (kind: CodeRunFailureKind, detail = LIMIT_DETAIL[kind]!(limits)) => {
    failure ??= { kind, detail }
  }

  let cpuUsed = 0
  let segmentStart = 0
  const deadline = performance.now() + limits.timeoutMs
  let wake: (() => void) | undefined
  const completions: string[] = []
  const nudge = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  const timer = setTimeout(() => {
    fail('timeout')
    nudge()
  }, limits.timeoutMs)
  const onAbort = () => {
    cancelled = true
    nudge()
  }
  signal?.addEventListener('abort', onAbort, { once: true })

  const runtime: QuickJSRuntime = module.newRuntime()
  runtime.setMemoryLimit(limits.memoryBytes)
  runtime.setMaxStackSize(limits.stackBytes)
  let metered = false
  runtime.setInterruptHandler(() => {
    if (failure || cancelled) return true
    if (!metered) return false
    const now = performance.now()
    if (cpuUsed + (now - segmentStart) > limits.cpuTimeMs) fail('cpu')
    else if (now > deadline) fail('timeout')
    return failure !== undefined
  })
  const context: QuickJSContext = runtime.newContext()
  const owned: QuickJSHandle[] = []
  const own = (handle: QuickJSHandle) => (owned.push(handle), handle)

  // Every entry into the VM is a CPU segment. Built-ins that never poll the interrupt handler can
  // overrun a limit inside one segment; the check afterwards still fails the run.
  function enter<T>(step: () => T): T {
    segmentStart = performance.now()
    try {
      return step()
    } finally {
      const now = performance.now()
      cpuUsed += now - segmentStart
      if (cpuUsed > limits.cpuTimeMs) fail('cpu')
      else if (now > deadline) fail('timeout')
    }
  }

  const host = own(context.newFunction('host', (payloadHandle) => {
    appendLog(context.getString(payloadHandle).slice(1))
  }))

  // Submits the calls the program queued since the last drain.
  function submitAll(batch: string): void {
    for (const entry of batch.split('\u0001')) {
      const first = entry.indexOf('\n')
      const second = entry.indexOf('\n', first + 1)
      const id = entry.slice(0, first)
      const name = entry.slice(first + 1, second)
      const settleWith = (outcome: CallOutcome) => {
        completions.push(outcome.ok ? `${id}\n1${outcome.json}` : `${id}\n0${outcome.message}`)
        nudge()
      }
      if (++calls > limits.maxCalls) return void fail('calls')
      let args: JsonValue
      try {
        args = JSON.parse(entry.slice(second + 1))
      } catch {
        settleWith({ ok: false, message: 'the arguments are not JSON' })
        continue
      }
      scheduler.submit(name, args, settleWith)
    }
  }

  function appendLog(line: string): void {
    if (failure) return
    const bytes = Buffer.byteLength(line) + 1
    if (outputBytes + bytes > limits.maxOutputBytes) {
      const room = Math.max(0, limits.maxOutputBytes - outputBytes)
      logs.push(Buffer.from(line).subarray(0, room).toString().replace(/\uFFFD$/, '') + '…')
      outputBytes = limits.maxOutputBytes
      return void fail('output')
    }
    outputBytes += bytes
    logs.push(line)
  }

  try {
    // The prelude is ours: it runs outside the program's budgets; only the memory limit applies.
    const unwrap = (result: ReturnType<QuickJSContext['evalCode']>): QuickJSHandle => {
      if (!result.error) return own(result.value)
      const text = result.error.consume((handle) => JSON.stringify(context.dump(handle)))
      throw new CodeRunError(/out of memory/.test(text) ? 'memory' : 'runtime', `the sandbox could not start: ${text}`, logs)
    }
    const setup = unwrap(context.evalCode(PRELUDE, 'prelude.js'))
    const names = own(context.newString(JSON.stringify(options.toolNames)))
    const helpers = unwrap(context.callFunction(setup, context.undefined, host, names))
    const [settle, finish, describe, drain] = [0, 1, 2, 3].map((index) => own(context.getProp(helpers, index)))

    // Describes a thrown VM value as text (inside the VM, under the same limits).
    const explain = (errorHandle: QuickJSHandle): string => {
      const described = enter(() => context.callFunction(describe, context.undefined, errorHandle))
      if (described.error) {
        described.error.dispose()
        return 'Uncaught (the error could not be described)'
      }
      return clip(described.value.consume((handle) => context.getString(handle)))
    }

    metered = true
    const wrapper = `(async () => {'use strict';${options.code}\n})()`
    const evaluated = enter(() => context.evalCode(wrapper, 'program.js'))
    if (evaluated.error) {
      const text = evaluated.error.consume(explain)
      if (!failure) fail(text.startsWith('SyntaxError') ? 'syntax' : classify(text), text)
      throw failed()
    }
    const main = own(evaluated.value)

    for (;;) {
      if (cancelled) break
      while (completions.length) {
        if (failure) break
        const payload = context.newString(completions.shift()!)
        const settled = enter(() => context.callFunction(settle, context.undefined, payload))
        payload.dispose()
        if (settled.error) {
          const text = settled.error.consume(explain)
          fail(classify(text), text)
        } else settled.value.dispose()
      }
      if (failure) break
      const jobs = enter(() => runtime.executePendingJobs())
      if (jobs.error) {
        const text = jobs.error.consume(explain)
        fail(classify(text), text)
      }
      if (failure) break
      const drained = enter(() => context.callFunction(drain, context.undefined))
      if (drained.error) {
        const text = drained.error.consume(explain)
        fail(classify(text), text)
        break
      }
      const batch = drained.value.consume((handle) => context.getString(handle))
      if (batch) submitAll(batch)
      if (failure) break
      scheduler.pump()
      const state = context.getPromiseState(main)
      if (state.type === 'rejected') {
        const text = state.error.consume(explain)
        fail(classify(text), text)
        break
      }
      if (state.type === 'fulfilled') {
        const result = state.notAPromise ? finishWith(main) : state.value.consume(finishWith)
        if (failure) break
        return result
      }
      if (!completions.length && scheduler.outstanding === 0) {
        fail('runtime', 'the program is waiting for a promise that can never settle (only tools.* calls are asynchronous here: there are no timers or I/O)')
        break
      }
      if (!completions.length) await new Promise<void>((resolve) => (wake = resolve))
    }
    throw failed()

    function finishWith(valueHandle: QuickJSHandle): ProgramOutput {
      const encoded = enter(() => context.callFunction(finish, context.undefined, valueHandle))
      if (encoded.error) {
        const text = encoded.error.consume(explain)
        fail(classify(text) === 'memory' ? 'memory' : 'runtime', `the program's return value is not JSON: ${text.replace(/^TypeError: /, '').split('\n')[0]}`)
        return { logs }
      }
      const json = encoded.value.consume((handle) => (context.typeof(handle) === 'string' ? context.getString(handle) : undefined))
      if (json === undefined) return { logs }
      if (outputBytes + Buffer.byteLength(json) > limits.maxOutputBytes) {
        fail('output', `the program's result is ${Buffer.byteLength(json)} bytes of JSON, which with the logs exceeds maxOutputBytes (${limits.maxOutputBytes}); return less, or aggregate inside the program`)
        return { logs }
      }
      return { logs, result: JSON.parse(json) }
    }
  } catch (error) {
    if (error instanceof CodeRunError || error instanceof ToolAbortedError) throw error
    // The WASM itself failed (not the program): unwound mid-operation, the module is unusable. Drop it
    // without disposing anything in it; the next run loads a fresh one.
    broken = true
    dropModule(current)
    if (error instanceof RangeError) {
      throw new CodeRunError('memory', 'the program exhausted the native stack (deep recursion inside a built-in such as JSON.stringify of deeply nested data); the sandbox was reset', logs)
    }
    throw new CodeRunError('runtime', `the sandbox failed: ${error instanceof Error ? error.message : String(error)}; the sandbox was reset`, logs)
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
    await scheduler.close()
    if (!broken) {
      for (const handle of owned.reverse()) if (handle.alive) handle.dispose()
      context.dispose()
      runtime.dispose()
    }
  }

  function failed(): Error {
    if (cancelled) return cancelledError()
    const { kind, detail } = failure!
    return new CodeRunError(kind, detail, logs)
  }
}

/** A VM exception that means a size limit was hit, not a program bug. */
function classify(text: string): CodeRunFailureKind {
  return /^InternalError: (out of memory|string too long)/.test(text) ? 'memory' : 'runtime'
}

function cancelledError(): Error {
  return new ToolAbortedError('run_code was cancelled; its outstanding tool calls were aborted')
}

/** Keeps the first lines of a long error description (deep recursion gives thousands of frames). */
function clip(text: string, maxLines = 12): string {
  const lines = text.split('\n')
  return lines.length <= maxLines ? text : `${lines.slice(0, maxLines).join('\n')}\n    ... ${lines.length - maxLines} more lines`
}
