import { envFilter, type EnvPolicy } from '@cordage/core'
import { InvalidEnvError } from './errors.js'

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const MAX_VALUE_BYTES = 32_768

/**
 * Builds a session's environment: the inherited one through the configured policy (credentials withheld
 * by default), then what the call asked for (checked: variable names only, no NUL, bounded values), then
 * the terminal type every full-screen program needs.
 */
export function sessionEnv(policy: EnvPolicy): (requested: Record<string, string> | undefined) => Record<string, string> {
  const filter = envFilter(policy)
  return (requested) => {
    const env = filter(process.env)
    for (const [name, value] of Object.entries(requested ?? {})) {
      if (!NAME.test(name))
        throw new InvalidEnvError(`env name ${JSON.stringify(name)} is not a variable name (letters, digits and _, not starting with a digit)`)
      if (value.includes('\0') || Buffer.byteLength(value) > MAX_VALUE_BYTES)
        throw new InvalidEnvError(`env ${name}: values must hold no NUL character and at most ${MAX_VALUE_BYTES} bytes`)
      env[name] = value
    }
    env.TERM = 'xterm-256color'
    return env
  }
}
