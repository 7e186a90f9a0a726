// @ts-check
// The worker's session mode: one persistent QuickJS context that lives until the host ends it, and
// whose invocations (each an async function body the host sends) may overlap while they wait for host
// functions. Plain JavaScript: the worker imports it from src/ and dist/ alike. Messages: protocol.ts.
//
// A session differs from a run in what ends it. An invocation that throws fails alone; a breached
// limit (one step over its CPU budget, the heap exhausted, an interpreter failure) ends the session,
// since the context may hold the state that caused it. Console lines travel with each reply rather
// than through the shared log buffer: a session has no end to report them at.

/** @typedef {import('./protocol.js').HostMessage} HostMessage */
/** @typedef {import('./protocol.js').WorkerMessage} WorkerMessage */
/** @typedef {import('./protocol.js').RunFailure} RunFailure */
/** @typedef {import('./worker.js').Run} Run */
/**
 * @typedef {object} SessionState
 * @property {string[]} logs Console lines since the last reply.
 * @property {number} logBytes Their UTF-8 bytes, bounded per reply.
 * @property {number} dropped Lines dropped past the bound since the last reply.
 * @property {string[]} early Invocations that failed before they started (their code did not compile), in `harvest`'s format.
 */
/**
 * What the worker lends session mode.
 * @typedef {object} SessionKit
 * @property {(hostFunctions: string) => import('./worker.js').Sandbox} fresh Takes the sandbox prepared for runs (or makes one) and binds the host functions.
 * @property {(hostFunctions: string) => import('./worker.js').Sandbox} spare Makes another sandbox with the host functions bound.
 * @property {(sandbox: import('./worker.js').Sandbox, budgetMs: number, session: SessionState) => Run} adopt Makes a sandbox the current run.
 * @property {<T>(run: Run, step: () => T) => T} enter Runs a step inside the VM on the CPU meter.
 * @property {(run: Run, kind: RunFailure['kind'], detail?: string) => void} fail
 * @property {(run: Run, text: string) => 'memory' | 'runtime'} classify
 * @property {(run: Run, error: import('quickjs-emscripten').QuickJSHandle) => string} explain
 * @property {(message: WorkerMessage) => void} post
 * @property {(sandbox: import('./worker.js').Sandbox) => void} dispose
 * @property {(run: Run) => number} end Disposes the run's sandbox, clears the current run, and returns the WASM heap size.
 * @property {number} maxLogBytes
 */

// Invocation bodies start on the wrapper's line, so line numbers in errors are those of the code sent.
const PREFIX = '(async () => {'

/**
 * Evaluates a session's setup (trusted code of the caller) in `sandbox`: it must settle at once and
 * call no host function. Returns why it failed, or undefined.
 * @param {import('./worker.js').Sandbox} sandbox @param {string} setup @param {<T>(step: () => T) => T} within
 */
function runSetup(sandbox, setup, within) {
  const { context, lane } = sandbox
  const evaluated = within(() => context.evalCode(`${PREFIX}${setup}\n})()`, 'setup.js'))
  if (evaluated.error) return describeError(sandbox, evaluated.error)
  return evaluated.value.consume((promise) => {
    const thrown = within(() => lane.jobs())
    if (thrown !== undefined) return thrown
    const drained = within(() => lane.drain())
    if (typeof drained !== 'string') return drained.problem
    if (drained.length > 1) return 'the setup called a host function'
    const state = context.getPromiseState(promise)
    if (state.type === 'pending') return 'the setup must settle without waiting'
    if (state.type === 'rejected') return describeError(sandbox, state.error)
    state.value.dispose()
    return undefined
  })
}

/** @param {import('./worker.js').Sandbox} sandbox @param {import('quickjs-emscripten').QuickJSHandle} error */
function describeError(sandbox, error) {
  const { context, helpers } = sandbox
  const described = context.callFunction(helpers[3], context.undefined, error)
  error.dispose()
  if (described.error) {
    described.error.dispose()
    return 'Uncaught (the error could not be described)'
  }
  return described.value.consume((handle) => context.getString(handle))
}

/** @param {SessionKit} kit */
export function createSessionMode(kit) {
  const { enter, fail, classify, explain, post } = kit
  // The setup of the last session opened, and a context with it already evaluated, made while idle:
  // the next session with the same setup starts from it (the caller's bootstrap is not parsed again).
  /** @type {{ key: string, hostFunctions: string, setup: string } | undefined} */
  let wanted
  /** @type {{ key: string, sandbox: import('./worker.js').Sandbox } | undefined} */
  let prepared
  /** @type {string | undefined} */
  let unpreparable

  /** Ends a session that breached a limit: its context is disposed and the host told why. @param {Run} run */
  function broken(run) {
    const heapBytes = kit.end(run)
    post({ type: 'done', ...(run.failure && { failure: run.failure }), heapBytes, reusable: true })
  }

  /** Runs the pending jobs and replies with the host calls queued and the invocations settled since. @param {Run} run */
  function step(run) {
    if (run.failure) return broken(run)
    const { context, helpers, lane } = run.sandbox
    const thrown = enter(run, () => lane.jobs())
    if (thrown !== undefined) fail(run, classify(run, thrown), thrown)
    if (run.failure) return broken(run)
    const batch = enter(run, () => lane.drain())
    if (typeof batch !== 'string') fail(run, classify(run, batch.problem), batch.problem)
    if (run.failure || typeof batch !== 'string') return broken(run)
    const harvested = enter(run, () => context.callFunction(helpers[7], context.undefined))
    if (harvested.error) {
      const text = explain(run, harvested.error)
      fail(run, classify(run, text), text)
      return broken(run)
    }
    const session = /** @type {SessionState} */ (run.session)
    const settled = [...session.early.splice(0), .../** @type {string[]} */ (JSON.parse(harvested.value.consume((handle) => context.getString(handle))))]
    // An invocation that ran out of memory leaves a context that cannot be trusted to work again.
    for (const entry of settled) {
      const cut = entry.indexOf('\n')
      if (entry[cut + 1] === '0' && classify(run, entry.slice(cut + 2)) === 'memory') fail(run, 'memory', entry.slice(cut + 2).split('\n')[0])
    }
    if (run.failure) return broken(run)
    const logs = session.logs.splice(0)
    if (session.dropped) logs.push(`… ${session.dropped} more console lines were dropped (over ${kit.maxLogBytes} bytes between replies)`)
    session.logBytes = 0
    session.dropped = 0
    post({ type: 'progress', calls: batch.slice(1), settled, logs })
  }

  return {
    /** @param {Extract<HostMessage, { type: 'open' }>} message */
    open(message) {
      const { hostFunctions, setup } = message
      const key = setup === undefined ? undefined : `${hostFunctions}\u0000${setup}`
      if (key !== undefined && setup !== undefined) wanted = { key, hostFunctions, setup }
      const ready = key !== undefined && prepared?.key === key ? prepared.sandbox : undefined
      if (ready) prepared = undefined
      const run = kit.adopt(ready ?? kit.fresh(hostFunctions), message.stepMs, { logs: [], logBytes: 0, dropped: 0, early: [] })
      if (!ready && setup !== undefined) {
        const problem = runSetup(run.sandbox, setup, (work) => enter(run, work))
        if (problem !== undefined && !run.failure) fail(run, 'runtime', `the session's setup failed: ${problem}`)
      }
      step(run)
    },

    /** While idle: makes a context with the last session's setup evaluated. Returns whether it did any work. */
    prepare() {
      if (!wanted || prepared?.key === wanted.key || unpreparable === wanted.key) return false
      if (prepared) kit.dispose(prepared.sandbox)
      prepared = undefined
      const sandbox = kit.spare(wanted.hostFunctions)
      if (runSetup(sandbox, wanted.setup, (work) => work()) === undefined) prepared = { key: wanted.key, sandbox }
      else {
        kit.dispose(sandbox)
        unpreparable = wanted.key
      }
      return true
    },

    /** Evaluates one invocation's body and tracks its promise. @param {Run} run @param {Extract<HostMessage, { type: 'invoke' }>} message */
    invoke(run, message) {
      const { context, helpers } = run.sandbox
      const evaluated = enter(run, () => context.evalCode(`${PREFIX}${message.code}\n})()`, message.file ?? 'session.js'))
      if (evaluated.error) {
        const text = explain(run, evaluated.error)
        if (run.failure) return broken(run)
        // Report a syntax error's column on the first line as in the code sent, without the wrapper.
        const located = text.replace(
          /^(SyntaxError: [^\n]*\n\s*at [^\n]*?:1:)(\d+)/,
          (_all, head, column) => `${head}${Math.max(1, Number(column) - PREFIX.length)}`,
        )
        const session = /** @type {SessionState} */ (run.session)
        session.early.push(`${message.id}\n0${located}`)
        return step(run)
      }
      evaluated.value.consume((promise) => {
        const id = context.newNumber(message.id)
        // Tracking runs the code too: `then` reads the promise's `constructor` (Promise species).
        const tracked = enter(run, () => context.callFunction(helpers[6], context.undefined, id, promise))
        id.dispose()
        if (tracked.error) {
          const text = explain(run, tracked.error)
          if (classify(run, text) === 'memory') fail(run, 'memory', text)
          else if (!run.failure) /** @type {SessionState} */ (run.session).early.push(`${message.id}\n0${text}`)
        } else tracked.value.dispose()
      })
      return run.failure ? broken(run) : step(run)
    },

    step,

    /** A console line of the session, kept for the next reply within the byte bound. @param {Run} run @param {string} line */
    log(run, line) {
      const session = /** @type {SessionState} */ (run.session)
      const bytes = Buffer.byteLength(line) + 1
      if (session.logBytes + bytes > kit.maxLogBytes) session.dropped++
      else {
        session.logBytes += bytes
        session.logs.push(line)
      }
    },
  }
}
