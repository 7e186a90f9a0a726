import { toJsonValue, type JsonValue } from '@cordage/core'
import type { CodeHostFunction } from '@cordage/services'
import { HostFunctionError } from './errors.js'
import { thrownOutcome, type CallOutcome } from './protocol.js'

const HOST_PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/
// The prelude's own globals, and the global properties that cannot be redefined.
const RESERVED = new Set(['tools', 'console', 'ToolCallError', 'describeTool', 'globalThis', 'undefined', 'NaN', 'Infinity'])

/** Checks `host` keys: dotted identifiers, no reserved root, no key that is a property path of another. */
export function hostFunctions(host: Record<string, CodeHostFunction>): Map<string, CodeHostFunction> {
  const paths = new Map<string, CodeHostFunction>()
  for (const [path, fn] of Object.entries(host)) {
    if (!HOST_PATH.test(path)) throw new HostFunctionError(`host function "${path}" is not a dotted identifier path (e.g. "agents.run")`)
    const parts = path.split('.')
    if (RESERVED.has(parts[0]!)) throw new HostFunctionError(`host function "${path}" would replace the program's "${parts[0]}"`)
    if (typeof fn !== 'function') throw new HostFunctionError(`host function "${path}" is not a function`)
    paths.set(path, fn)
  }
  for (const path of paths.keys()) {
    const parts = path.split('.')
    for (let length = 1; length < parts.length; length++) {
      const prefix = parts.slice(0, length).join('.')
      if (paths.has(prefix)) throw new HostFunctionError(`host functions "${prefix}" and "${path}" overlap: one is a property of the other`)
    }
  }
  return paths
}

/** Calls one host function; its JSON value, or its failure's message, as the program's call outcome. */
export async function callHost(fn: CodeHostFunction, args: JsonValue, signal: AbortSignal): Promise<CallOutcome> {
  try {
    return { ok: true, json: JSON.stringify(toJsonValue(await fn(args, signal))) }
  } catch (error) {
    return thrownOutcome(error)
  }
}
