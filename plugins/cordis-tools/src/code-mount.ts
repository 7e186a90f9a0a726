import type { Context, Fiber } from 'cordis'
import { CordageError, isJsonObject, type JsonValue, errorMessage } from '@cordage/core'
import { FiberState } from '@cordage/registry'
import type { CodeRunner } from '@cordage/services'
import { GuestBridge, type BridgeOptions } from './bridge.js'
import { CordisToolError } from './errors.js'
import guest from './guest.js'
import { syntaxMessage } from './syntax.js'

// The façade's source, the setup of each mount's sandbox session (an idle worker evaluates it ahead).
const GUEST = `return (${guest.toString()})(cordage.op)`
// The code becomes the body of an async function handed to the façade; the wrapper shares its first
// line, so line numbers are the code's own.
const PREFIX = 'return __mount(async () => {'

/** A mount of model-written code that started: its plugin's fiber and the bridge to its sandbox. */
export interface CodeMount {
  pluginName: string
  inject: string[]
  fiber: Fiber
  bridge: GuestBridge
}

/** A coded failure for what went wrong in the sandbox `during` a stage, keeping what the code threw. */
function stageFailure(during: string, error: unknown, timeoutMs: number, code?: string): CordisToolError {
  // Errors of the session carry a `kind`; those of this plugin and of the façade are already worded.
  const kind = (error as { kind?: string }).kind
  if (CordageError.is(error) && kind === undefined) return error
  const message = errorMessage(error)
  if (code !== undefined && kind === 'runtime' && message.startsWith('SyntaxError'))
    return new CordisToolError('MOUNT_SYNTAX', syntaxMessage(message, code, PREFIX))
  if (kind === 'timeout') return new CordisToolError('MOUNT_TIMEOUT', `${during} did not finish within ${timeoutMs} ms; it must return promptly`)
  if (kind === 'cpu')
    return new CordisToolError(
      'MOUNT_TIMEOUT',
      `${during} ran past ${timeoutMs} ms of CPU time (a synchronous loop, or a flood of promise jobs?) and was stopped`,
    )
  if (kind === 'memory') return new CordisToolError('MOUNT_FAILED', `${during} exhausted the sandbox's memory: ${message}`)
  return new CordisToolError('MOUNT_FAILED', `${during} failed: ${message.split('\n', 1)[0]}`)
}

/**
 * Starts a mount of `code`: a sandbox session with the façade, the code evaluated to a plugin, and the
 * plugin's fiber under `group` whose apply runs in the sandbox. On any failure everything is undone
 * (the fiber disposed, the session closed) and a coded error thrown.
 */
export async function startCodeMount(
  codeMode: CodeRunner,
  group: Context,
  code: string,
  config: JsonValue | undefined,
  options: BridgeOptions & { onEnd(error: Error): void },
): Promise<CodeMount> {
  const { id, timeoutMs } = options
  const bridge = new GuestBridge(options)
  try {
    bridge.session = await codeMode.open({
      host: { 'cordage.op': bridge.op },
      setup: GUEST,
      stepCpuMs: timeoutMs,
      onLog: (line) => options.logger.info(`[cordis:${id}] ${line}`),
      onEnd: options.onEnd,
    })
  } catch (error) {
    throw new CordisToolError('MOUNT_FAILED', `the sandbox for the code could not start: ${errorMessage(error)}`)
  }
  let fiber: Fiber | undefined
  let pluginName = '<anonymous>'
  try {
    const loaded = await bridge.session.evaluate(`${PREFIX}${code}\n})`, { timeoutMs, file: `${id}.js` }).catch((error: unknown) => {
      throw stageFailure('evaluating the code', error, timeoutMs, code)
    })
    if (!isJsonObject(loaded)) throw new CordisToolError('MOUNT_FAILED', 'evaluating the code gave no answer')
    if (typeof loaded.threw === 'string') throw new CordisToolError('MOUNT_FAILED', `evaluating the code threw: ${loaded.threw}`)
    if (typeof loaded.notPlugin === 'string') throw new CordisToolError('MOUNT_NOT_A_PLUGIN', loaded.notPlugin)
    pluginName = typeof loaded.name === 'string' ? loaded.name : '<anonymous>'
    const inject = Array.isArray(loaded.inject) ? loaded.inject.filter((name): name is string => typeof name === 'string') : []
    const plugin = group.plugin(
      {
        name: pluginName,
        inject,
        apply: (real: Context, pluginConfig: unknown) =>
          bridge.activate(real, inject, pluginConfig).catch((error: unknown) => {
            throw stageFailure('apply', error, timeoutMs)
          }),
      },
      config ?? {},
    )
    fiber = plugin
    await plugin
    if (plugin.state === FiberState.FAILED) throw new CordisToolError('MOUNT_FAILED', 'the plugin failed to start')
    return { pluginName, inject, fiber: plugin, bridge }
  } catch (error) {
    await fiber?.dispose().catch(() => {})
    await bridge.session.close()
    throw rollback(pluginName, error)
  }
}

/** Words a failed start for the model: what failed, that it was rolled back, and for a name clash, what to do. */
export function rollback(name: string, error: unknown): CordageError {
  if (CordageError.is(error) && error.code !== 'MOUNT_FAILED' && error.code !== 'FACADE_DENIED') return error
  const message = errorMessage(error)
  const clash = /already registered|duplicate|has been registered/i.test(message)
  const hint = clash ? ' (a name is taken: pick another name, or unmount the mount that owns it)' : ''
  return new CordisToolError('MOUNT_FAILED', `plugin "${name}" did not start and was rolled back: ${message}${hint}`)
}
