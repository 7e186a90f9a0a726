import vm from 'node:vm'
import { CordisToolError } from './errors.js'

// The code becomes the body of an async arrow function, so `return` and top-level `await` work. The
// wrapper adds one line before the code; reported line numbers subtract it.
const PREFIX = '(async () => {\n'
const SUFFIX = '\n})()'

// Calls a function of the realm with the realm's own timeout covering its synchronous part. The
// target and arguments travel through one global slot per call, saved and restored around it, so a
// guarded call made from inside another (a listener firing during `apply`) does not clobber it.
const CALL = new vm.Script('globalThis[" call"].target.apply(globalThis[" call"].self, globalThis[" call"].args)', { filename: 'cordis-call' })

/** What mounted code may log: tagged lines through the host's logger, since listeners fire long after the call. */
export interface SandboxLogger {
  info(text: string): void
  warn(text: string): void
}

function formatArgs(args: unknown[]): string {
  return args
    .map((arg) => {
      if (typeof arg === 'string') return arg
      try {
        return JSON.stringify(arg) ?? String(arg)
      } catch {
        return String(arg)
      }
    })
    .join(' ')
}

/** A syntax error with its line, the offending source line and a caret, plus a hint that teaches the fix. */
function syntaxMessage(error: Error, code: string): string {
  const stack = error.stack ?? ''
  const location = /:(\d+)\n/.exec(stack)
  const line = location ? Number(location[1]) - 1 : undefined
  const lines = code.split('\n')
  const source = line !== undefined && line >= 1 && line <= lines.length ? lines[line - 1] : undefined
  const caretLine = stack.split('\n').find((text) => /^\s*\^+\s*$/.test(text))
  const hint =
    source && /\bas\s+\w|:\s*(string|number|boolean|any|void)\b|\binterface\s+\w/.test(source)
      ? 'mounted code is plain JavaScript, not TypeScript: remove type annotations'
      : 'check that brackets and braces balance; the code is the body of an async function, so end it with `return plugin`'
  const where = line !== undefined ? ` at line ${line}` : ''
  return `syntax error${where}: ${error.message}${source !== undefined ? `\n  ${source}${caretLine ? `\n  ${caretLine.replace(/^\s{0,4}/, '')}` : ''}` : ''}\n(${hint})`
}

/**
 * One mount's realm: a fresh `node:vm` context with no `process`, `require`, `Buffer`, timers or
 * `fetch` (they stay undefined, so `typeof` probes are inert), a tagged `console`, and the helpers the
 * caller lends (`lend`). The synchronous part of evaluation and of every later call into the code (apply,
 * listeners, tool bodies, renderers) runs under `timeoutMs`. Not a security boundary: host objects
 * lent to the code reach the host realm.
 */
export class Sandbox {
  private readonly context: vm.Context

  constructor(
    readonly id: string,
    private readonly timeoutMs: number,
    logger: SandboxLogger,
  ) {
    const tag = `[cordis:${id}]`
    this.context = vm.createContext(Object.create(null), { name: id, codeGeneration: { strings: true, wasm: false } })
    const log = (...args: unknown[]) => logger.info(`${tag} ${formatArgs(args)}`)
    const warn = (...args: unknown[]) => logger.warn(`${tag} ${formatArgs(args)}`)
    const console = Object.freeze({ log, info: log, debug: log, warn, error: warn })
    // `undefined` globals rather than traps: `typeof process` answers 'undefined' like in a browser.
    Object.assign(this.context, { console })
  }

  /** Adds globals the code may use (e.g. `defineTool`). */
  lend(helpers: Record<string, unknown>): void {
    Object.assign(this.context, helpers)
  }

  /** Evaluates `code` and returns what it resolved to, or throws `MOUNT_SYNTAX` / `MOUNT_FAILED`. */
  async evaluate(code: string): Promise<unknown> {
    let script: vm.Script
    try {
      script = new vm.Script(PREFIX + code + SUFFIX, { filename: `${this.id}.js` })
    } catch (error) {
      throw new CordisToolError('MOUNT_SYNTAX', syntaxMessage(error as Error, code))
    }
    let pending: Promise<unknown>
    try {
      pending = script.runInContext(this.context, { timeout: this.timeoutMs }) as Promise<unknown>
    } catch (error) {
      throw this.failure('evaluating the code', error)
    }
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new CordisToolError('MOUNT_TIMEOUT', `the code did not finish within ${this.timeoutMs} ms; it must return a plugin promptly`)),
        this.timeoutMs,
      )
    })
    try {
      return await Promise.race([pending, deadline])
    } catch (error) {
      throw CordisToolError.is(error) ? error : this.failure('evaluating the code', error)
    } finally {
      clearTimeout(timer)
    }
  }

  /** Calls a function of this realm with the timeout covering its synchronous part. */
  call<T>(target: Function, self: unknown, args: unknown[]): T {
    const slot = this.context as Record<string, unknown>
    const saved = slot[' call']
    slot[' call'] = { target, self, args }
    try {
      return CALL.runInContext(this.context, { timeout: this.timeoutMs }) as T
    } finally {
      slot[' call'] = saved
    }
  }

  /** A coded error for a throw (or a timeout) in the code, keeping its message. */
  failure(during: string, error: unknown): CordisToolError {
    const message = error instanceof Error || (error && typeof error === 'object' && 'message' in error) ? String((error as Error).message) : String(error)
    const timedOut = /Script execution timed out/.test(message)
    return new CordisToolError(
      timedOut ? 'MOUNT_TIMEOUT' : 'MOUNT_FAILED',
      timedOut ? `${during} ran past ${this.timeoutMs} ms (a synchronous loop?) and was stopped` : `${during} threw: ${message}`,
    )
  }
}
