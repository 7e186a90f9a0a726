import { createContext, Script } from 'node:vm'
import { PatternTimeoutError } from './errors.js'

/**
 * Longest one `waitFor` test may run. A test of the rows a send watches takes milliseconds; a pattern that
 * backtracks catastrophically (`^(a+)+$`) would hold the host's event loop for minutes, so it is stopped.
 */
export const PATTERN_BUDGET_MS = 500

// A regular expression cannot be interrupted on the thread that runs it, except by the watchdog of a vm
// script's `timeout`, which stops the whole script, the match included.
const context = createContext({ pattern: /(?:)/, text: '' })
const script = new Script('pattern.lastIndex = 0; pattern.test(text)')

/** `pattern.test(text)` within {@link PATTERN_BUDGET_MS}; past it, a `PatternTimeoutError` (INVALID_PATTERN). */
export function boundedTest(pattern: RegExp, text: string): boolean {
  context.pattern = pattern
  context.text = text
  try {
    return script.runInContext(context, { timeout: PATTERN_BUDGET_MS }) === true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new PatternTimeoutError(pattern.source, PATTERN_BUDGET_MS, text.length)
    throw error
  } finally {
    context.text = ''
  }
}
