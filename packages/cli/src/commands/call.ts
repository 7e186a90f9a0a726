import { CliError, EXIT, errorMessage } from '../errors.js'
import type { Command } from './command.js'
import { contentToText } from './render.js'

/** `cordage call <tool> '<json>' [--json]`: one call through the full pipeline, no model. */
export const callCommand: Command = {
  name: 'call',
  summary: 'call one tool directly (no model): prints its content, or its value with --json',
  usage: "<tool> ['<json arguments>'] [--json]",
  options: { json: { type: 'boolean', description: 'print the canonical value (or the failure) as JSON' } },
  async run({ values, positionals, output, cwd }) {
    const [name, raw = '{}', ...extra] = positionals
    if (!name) throw new CliError("usage: cordage call <tool> '<json arguments>'")
    if (extra.length) throw new CliError(`unexpected argument "${extra[0]}"; quote the JSON arguments as one argument`)
    let args: unknown
    try {
      args = JSON.parse(raw)
    } catch (error) {
      throw new CliError(`the arguments are not valid JSON: ${errorMessage(error)}`)
    }
    const [{ startRuntime }, { StopSignals, signalExitCode }] = await Promise.all([import('../runtime.js'), import('../signals.js')])
    const controller = new AbortController()
    // The first signal cancels the call (its process tree is killed); a second one exits at once. A signal
    // during startup lets the plugins finish loading, so they unload (and end what they started) in order.
    const signals = new StopSignals((signal, again) => (again ? process.exit(signalExitCode(signal)) : controller.abort()))
    const runtime = await startRuntime({ cwd, configFile: values.config as string | undefined, verbose: !!values.verbose, output }).catch((error) => {
      signals.dispose()
      throw error
    })
    try {
      const result = await runtime.ctx.get('tools')!.execute({ name, arguments: args, signal: controller.signal })
      if (values.json) {
        output.line(
          JSON.stringify(
            result.isError
              ? { isError: true, error: { message: result.error.message, ...(result.error.info && { code: result.error.info.code }) }, content: result.content }
              : result.value,
            null,
            2,
          ),
        )
      } else if (result.isError) {
        output.error(contentToText(result.content))
      } else {
        output.line(contentToText(result.content))
      }
      return signals.exitCode(result.isError ? EXIT.failed : EXIT.ok)
    } finally {
      await runtime.dispose()
      signals.dispose()
    }
  },
}
