// @ts-check
// The worker thread that runs programs: it owns one QuickJS module whose WASM memory is capped, and
// runs one program at a time, each in a fresh runtime and context. Plain JavaScript so Node runs it
// from src/ and dist/ alike. Protocol and shared-memory layouts: protocol.ts, output.ts, budget.ts.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads'
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC } from 'quickjs-emscripten'
import prelude from './prelude.js'
import { DOORBELL, DOWN_LENGTH, handMail, readBox, Spinner } from './channel.js'
import { describeHandle, openLane } from './lane.js'
import { createSessionMode } from './worker-session.js'

/** @typedef {import('./protocol.js').WorkerData} WorkerData */
/** @typedef {import('./protocol.js').HostMessage} HostMessage */
/** @typedef {import('./protocol.js').WorkerMessage} WorkerMessage */
/** @typedef {import('./protocol.js').RunFailure} RunFailure */
/** @typedef {import('quickjs-emscripten').QuickJSHandle} QuickJSHandle */
/** @typedef {import('quickjs-emscripten').QuickJSContext} QuickJSContext */
/** @typedef {import('quickjs-emscripten').QuickJSRuntime} QuickJSRuntime */
/**
 * @typedef {{ runtime: QuickJSRuntime, context: QuickJSContext, owned: QuickJSHandle[], helpers: QuickJSHandle[], lane: import('./lane.js').Lane, run?: Run }} Sandbox
 * @typedef {import('./worker-session.js').SessionState} SessionState
 * @typedef {{ sandbox: Sandbox, failure?: RunFailure, outputBytes: number, metered: boolean, budgetMs: number, growFailures: number, session?: SessionState }} Run
 */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
const { wasmModule, limits, logBuffer, meterBuffer, inbox, controlBuffer, upBuffer, downBuffer, spinMicros, rawLane } = /** @type {WorkerData} */ (workerData)
const control = new Int32Array(controlBuffer)
const up = new Uint8Array(upBuffer)
const down = new Uint8Array(downBuffer)
const spinner = new Spinner(spinMicros)
const PAGE = 65536
// Emscripten's initial memory (static data, stack, allocator start); the program's heap comes after.
const BASE_BYTES = 16 << 20
// QuickJS cannot count its own allocations under emscripten (quickjs-emscripten#271), so the cap is
// the WASM memory itself: past it, malloc fails and QuickJS throws "out of memory".
const memory = new /** @type {any} */ (globalThis).WebAssembly.Memory({
  initial: BASE_BYTES / PAGE,
  maximum: Math.ceil((BASE_BYTES + limits.memoryBytes) / PAGE),
})
// When even the "out of memory" error cannot be allocated, QuickJS throws null instead; a failed
// growth of the WASM memory during the run tells that apart from a program's own `throw null`.
let growFailures = 0
const grow = memory.grow
memory.grow = /** @param {number} pages */ (pages) => {
  try {
    return grow.call(memory, pages)
  } catch (error) {
    growFailures++
    throw error
  }
}
const quickjs = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmModule: /** @type {any} */ (wasmModule), wasmMemory: memory }))
const PRELUDE = `(${prelude.toString()})`
const meter = new Float64Array(meterBuffer)
const logUsed = new Int32Array(logBuffer, 0, 1)
const logView = new DataView(logBuffer, 4)
const logBytes = new Uint8Array(logBuffer, 4)
const encoder = new TextEncoder()
const now = () => performance.timeOrigin + performance.now()

/** @type {Run | undefined} */
let current
/** When the worker took the message it is working on (`performance.now()`), for the `took` it reports. */
let stepping = 0
/** @type {Sandbox | undefined} */
let ready

/** Replies to the host: through the mailbox when it is spinning for the reply, else posted. @param {WorkerMessage} message */
function post(message) {
  if (!handMail(control, up, message)) port.postMessage(message)
}

/** A limit's detail is left empty: the host words it (budget.ts). @param {Run} run @param {RunFailure['kind']} kind @param {string} [detail] */
function fail(run, kind, detail = '') {
  run.failure ??= { kind, detail }
}

/** A fresh runtime and context with the prelude evaluated: made ahead of the run that will use it. */
function createSandbox() {
  const runtime = quickjs.newRuntime()
  runtime.setMemoryLimit(limits.memoryBytes)
  runtime.setMaxStackSize(limits.stackBytes)
  const context = runtime.newContext()
  // Its lane is opened below, once the prelude's helpers exist.
  const sandbox = /** @type {Sandbox} */ ({ runtime, context, owned: /** @type {QuickJSHandle[]} */ ([]), helpers: /** @type {QuickJSHandle[]} */ ([]) })
  runtime.setInterruptHandler(() => {
    const run = sandbox.run
    if (!run || run.failure) return run !== undefined
    // Between segments (`meter[0]` is 0) only the time already metered counts.
    if (run.metered && meter[1] + (meter[0] > 0 ? now() - meter[0] : 0) > run.budgetMs) fail(run, 'cpu')
    return run.failure !== undefined
  })
  const host = context.newFunction('host', (payload) => {
    const run = sandbox.run
    if (!run) return
    if (run.session) sessions.log(run, context.getString(payload).slice(1))
    else appendLog(run, context.getString(payload).slice(1))
  })
  const setup = context.unwrapResult(context.evalCode(PRELUDE, 'prelude.js'))
  const helpers = context.unwrapResult(context.callFunction(setup, context.undefined, host))
  sandbox.helpers = [0, 1, 2, 3, 4, 5, 6, 7].map((index) => context.getProp(helpers, index))
  sandbox.owned.push(host, setup, helpers, ...sandbox.helpers)
  sandbox.lane = openLane(sandbox, rawLane)
  return sandbox
}

/** @param {Sandbox} sandbox */
function disposeSandbox(sandbox) {
  sandbox.lane.close()
  for (const handle of sandbox.owned.reverse()) if (handle.alive) handle.dispose()
  sandbox.context.dispose()
  sandbox.runtime.dispose()
}

/** @param {Run} run @param {string} line */
function appendLog(run, line) {
  if (run.failure) return
  const bytes = Buffer.byteLength(line) + 1
  if (run.outputBytes + bytes > limits.maxOutputBytes) {
    const room = Math.max(0, limits.maxOutputBytes - run.outputBytes)
    writeLog(
      Buffer.from(line)
        .subarray(0, room)
        .toString()
        .replace(/\uFFFD$/, '') + '…',
    )
    run.outputBytes = limits.maxOutputBytes
    return fail(run, 'output')
  }
  run.outputBytes += bytes
  writeLog(line)
}

/** @param {string} line */
function writeLog(line) {
  const at = Atomics.load(logUsed, 0)
  const encoded = encoder.encode(line)
  if (at + 4 + encoded.length > logBytes.length) return
  logView.setUint32(at, encoded.length)
  logBytes.set(encoded, at + 4)
  Atomics.store(logUsed, 0, at + 4 + encoded.length)
}

/**
 * Every entry into the VM is a CPU segment on the shared meter. Built-ins that never poll the
 * interrupt handler can overrun the budget inside one segment: the host watches the meter for that.
 * @template T @param {Run} run @param {() => T} step @returns {T}
 */
function enter(run, step) {
  if (!run.metered) return step()
  meter[0] = now()
  try {
    return step()
  } finally {
    meter[1] += now() - meter[0]
    meter[0] = 0
    if (meter[1] > run.budgetMs) fail(run, 'cpu')
  }
}

/**
 * A VM exception that means a size limit was hit, not a program bug: an out-of-memory error, or the
 * null QuickJS throws when not even that error could be allocated (a growth of the heap failed).
 * @param {Run} run @param {string} text @returns {'memory' | 'runtime'}
 */
function classify(run, text) {
  if (/^InternalError: (out of memory|string too long)/.test(text)) return 'memory'
  return text === 'Uncaught null' && growFailures > run.growFailures ? 'memory' : 'runtime'
}

/** Fails the run with what the VM threw, as a breached limit (worded by the host) or an uncaught exception. @param {Run} run @param {string} text */
function failOn(run, text) {
  const kind = classify(run, text)
  fail(run, kind, kind === 'memory' && text === 'Uncaught null' ? '' : text)
}

/** Describes a thrown VM value as text (inside the VM, under the same limits). @param {Run} run @param {QuickJSHandle} error */
function explain(run, error) {
  return enter(run, () => describeHandle(run.sandbox, error))
}

/** Binds the tools and host functions in a sandbox (once per context). @param {Sandbox} sandbox @param {string} tools @param {string} hostFunctions */
function bind(sandbox, tools, hostFunctions) {
  const { context, helpers } = sandbox
  const names = [context.newString(tools), context.newString(hostFunctions)]
  context.unwrapResult(context.callFunction(helpers[0], context.undefined, ...names)).dispose()
  for (const handle of names) handle.dispose()
}

/** Makes `sandbox` the current run, metered from here on. @param {Sandbox} sandbox @param {number} budgetMs @param {SessionState} [session] */
function adopt(sandbox, budgetMs, session) {
  /** @type {Run} */
  const run = { sandbox, outputBytes: 0, metered: true, budgetMs, growFailures }
  if (session) run.session = session
  current = sandbox.run = run
  meter[0] = 0
  meter[1] = 0
  return run
}

/** Takes the prepared sandbox (or makes one), binds the tools and host functions and makes it the current run. @param {string} tools @param {string} hostFunctions */
function begin(tools, hostFunctions) {
  const sandbox = ready ?? createSandbox()
  ready = undefined
  bind(sandbox, tools, hostFunctions)
  return sandbox
}

const sessions = createSessionMode({
  fresh(hostFunctions) {
    const sandbox = begin('[]', hostFunctions)
    return sandbox
  },
  spare(hostFunctions) {
    const sandbox = createSandbox()
    bind(sandbox, '[]', hostFunctions)
    return sandbox
  },
  adopt,
  enter,
  fail,
  classify,
  explain,
  post,
  dispose: disposeSandbox,
  end(run) {
    current = undefined
    disposeSandbox(run.sandbox)
    return memory.buffer.byteLength
  },
  maxLogBytes: limits.maxOutputBytes,
})

/** @param {Extract<HostMessage, { type: 'run' }>} message */
function start(message) {
  const run = adopt(begin(message.tools, message.hostFunctions), limits.cpuTimeMs)
  const { context, helpers } = run.sandbox
  const evaluated = enter(run, () => context.evalCode(`(async () => {'use strict';${message.code}\n})()`, 'program.js'))
  if (evaluated.error) {
    const text = explain(run, evaluated.error)
    if (text.startsWith('SyntaxError')) fail(run, 'syntax', text)
    else failOn(run, text)
    return finish(run)
  }
  // Watching the promise runs the program's code too: `then` reads its `constructor` (Promise species).
  const watched = evaluated.value.consume((main) => enter(run, () => context.callFunction(helpers[5], context.undefined, main)))
  if (watched.error) {
    failOn(run, explain(run, watched.error))
    return finish(run)
  }
  watched.value.dispose()
  step(run)
}

/** Runs promise jobs; then the program has settled (any calls still queued are dropped) or waits for calls. @param {Run} run */
function step(run) {
  const { context, helpers, lane } = run.sandbox
  const thrown = enter(run, () => lane.jobs())
  if (thrown !== undefined) failOn(run, thrown)
  if (run.failure) return finish(run)
  const batch = enter(run, () => lane.drain())
  if (typeof batch !== 'string') {
    failOn(run, batch.problem)
    return finish(run)
  }
  if (run.failure) return finish(run)
  if (batch[0] === '0') return post({ type: 'wait', calls: batch.slice(1), took: Math.round((performance.now() - stepping) * 1000) })
  const threw = batch[0] === '2'
  const encoded = enter(run, () => context.callFunction(helpers[2], context.undefined))
  if (encoded.error) {
    const text = explain(run, encoded.error)
    if (threw) failOn(run, text)
    else
      fail(
        run,
        classify(run, text) === 'memory' ? 'memory' : 'runtime',
        `the program's return value is not JSON: ${text.replace(/^TypeError: /, '').split('\n')[0]}`,
      )
    return finish(run)
  }
  const json = encoded.value.consume((handle) => (context.typeof(handle) === 'string' ? context.getString(handle) : undefined))
  if (json !== undefined && run.outputBytes + Buffer.byteLength(json) > limits.maxOutputBytes) {
    fail(
      run,
      'output',
      `the program's result is ${Buffer.byteLength(json)} bytes of JSON, which with the logs exceeds maxOutputBytes (${limits.maxOutputBytes}); return less, or aggregate inside the program`,
    )
    return finish(run)
  }
  finish(run, json)
}

/** Ends the current run, disposing its sandbox first so a broken interpreter is found before reuse. @param {Run} run @param {string} [result] */
function finish(run, result) {
  current = undefined
  disposeSandbox(run.sandbox)
  post({ type: 'done', ...(run.failure ? { failure: run.failure } : result !== undefined && { result }), heapBytes: memory.buffer.byteLength, reusable: true })
}

/**
 * The interpreter itself failed (a WASM trap, an emscripten abort, the native stack exhausted inside
 * a built-in): the module is unusable. Report it and end this thread; the pool starts a fresh one.
 * @param {unknown} error
 */
function crash(error) {
  const message = error instanceof Error ? error.message : String(error)
  const failure =
    error instanceof RangeError
      ? {
          kind: /** @type {const} */ ('memory'),
          detail:
            'the program exhausted the native stack (deep recursion inside a built-in such as JSON.stringify of deeply nested data); the sandbox was reset',
        }
      : { kind: /** @type {const} */ ('aborted'), detail: `the interpreter aborted (${message.split('\n')[0]}); the sandbox was reset` }
  post({ type: 'done', failure: current?.failure?.kind === 'cpu' ? current.failure : failure, heapBytes: memory.buffer.byteLength, reusable: false })
  process.exit(1)
}

/** @param {HostMessage} message */
function handle(message) {
  if (message.type === 'run') start(message)
  else if (message.type === 'open') sessions.open(message)
  else if (message.type === 'invoke' && current?.session) sessions.invoke(current, message)
  else if (message.type === 'settle' && current) {
    const run = current
    const { lane } = run.sandbox
    for (const completion of message.completions) {
      const thrown = enter(run, () => lane.settle(completion))
      if (thrown !== undefined) failOn(run, thrown)
      if (run.failure) break
    }
    if (run.session) sessions.step(run)
    else if (run.failure) finish(run)
    else step(run)
  } else if (message.type === 'end') {
    if (current) {
      const run = current
      current = undefined
      disposeSandbox(run.sandbox)
    }
    post({ type: 'ended', heapBytes: memory.buffer.byteLength, reusable: true })
  }
}

/**
 * The thread's life after start-up: take the host's messages synchronously (from the mailbox or the
 * inbox port), and block on the doorbell while there are none (a futex wake costs a fraction of a trip
 * through an event loop). While a run waits for its calls, spin briefly first: a quick tool answers
 * before a wake would arrive. The host terminates the thread to stop it, which also ends a wait.
 */
function serve() {
  for (;;) {
    const seen = Atomics.load(control, DOORBELL)
    const message = readBox(control, DOWN_LENGTH, down) ?? receiveMessageOnPort(inbox)?.message
    if (message) {
      stepping = performance.now()
      if (message.type === 'settle') spinner.took = message.took
      // A session's CPU budget is per step: each message starts one.
      if (current?.session) meter[1] = 0
      handle(message)
      continue
    }
    // Idle: make the next run's sandbox now, outside any run's time, then the next session's.
    if (!current && !ready) {
      ready = createSandbox()
      continue
    }
    if (!current && sessions.prepare()) continue
    if (current && !current.session && spinner.engage() && spinner.spin(() => Atomics.load(control, DOORBELL) !== seen)) continue
    Atomics.wait(control, DOORBELL, seen)
  }
}

// V8 compiles WASM lazily and tiers it up while it runs: one throwaway run makes the first real run fast.
try {
  const sandbox = createSandbox()
  const warm = sandbox.context.evalCode('(async () => { let n = 0; for (let i = 0; i < 2000; i++) n += JSON.stringify({ i }).length; return n })()')
  if (warm.error) warm.error.dispose()
  else warm.value.dispose()
  sandbox.runtime.executePendingJobs()
  disposeSandbox(sandbox)
} catch (error) {
  crash(error)
}
post({ type: 'ready' })
try {
  serve()
} catch (error) {
  crash(error)
}
