import { errorMessage } from './errors.js'
import type { Output } from './output.js'

const ignore = () => {}

/**
 * Keeps a serving process (`run`, `chat`, `mcp serve`) alive when third-party code rejects a promise
 * nobody awaits or throws from a timer: Node would end the process, dropping every call in flight, the
 * session's end and the cleanup of running processes. Each one is logged with a code instead.
 * Returns the function that removes the handlers.
 */
export function containStrayErrors(output: Output): () => void {
  const report = (code: string, what: string) => (error: unknown) => {
    const detail = process.env.CORDAGE_DEBUG && error instanceof Error && error.stack ? error.stack : errorMessage(error)
    try {
      output.error(`${output.style('yellow', 'warn')}: ${what} was contained (${code}): ${detail}`)
    } catch {
      // The error stream itself is gone; there is nobody left to tell.
    }
  }
  const rejection = report('UNHANDLED_REJECTION', 'an unhandled promise rejection')
  const exception = report('UNCAUGHT_EXCEPTION', 'an uncaught exception (a throw from a callback or timer)')
  process.on('unhandledRejection', rejection)
  process.on('uncaughtException', exception)
  // A broken stderr must not turn each report into another uncaught error.
  process.stderr.on('error', ignore)
  return () => {
    process.off('unhandledRejection', rejection)
    process.off('uncaughtException', exception)
    process.stderr.off('error', ignore)
  }
}
