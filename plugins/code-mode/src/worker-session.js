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
 * @property {(hostFunctions: string, budgetMs: number, session: SessionState) => Run} begin Takes a prepared sandbox, binds the host functions and makes it the current run.
 * @property {<T>(run: Run, step: () => T) => T} enter Runs a step inside the VM on the CPU meter.
 * @property {(run: Run, kind: RunFailure['kind'], detail?: string) => void} fail
 * @property {(run: Run, text: string) => 'memory' | 'runtime'} classify
 * @property {(run: Run, error: import('quickjs-emscripten').QuickJSHandle) => string} explain
 * @property {(message: WorkerMessage) => void} post
 * @property {(run: Run) => number} end Disposes the run's sandbox, clears the current run, and returns the WASM heap size.
 * @property {number} maxLogBytes
 */

// Invocation bodies start on the wrapper's line, so line numbers in errors are those of the code sent.
const PREFIX = '(async () => {'

/** @param {SessionKit} kit */
export function createSessionMode(kit) {
  const { enter, fail, classify, explain, post } = kit

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
      step(kit.begin(message.hostFunctions, message.stepMs, { logs: [], logBytes: 0, dropped: 0, early: [] }))
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
        const tracked = context.callFunction(helpers[6], context.undefined, id, promise)
        id.dispose()
        if (tracked.error) {
          tracked.error.dispose()
          fail(run, 'memory')
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
