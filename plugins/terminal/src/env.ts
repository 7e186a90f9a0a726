import { InvalidEnvError } from './errors.js'

/** Inherited variables withheld from sessions (case-insensitive patterns, `*` any run): credentials. */
export const DEFAULT_ENV_DENY: readonly string[] = [
  '*_API_KEY', '*_APIKEY', 'API_KEY', '*_KEY', '*_TOKEN', 'TOKEN', '*_SECRET', '*_SECRET_*', 'SECRET',
  '*_PASSWORD', 'PASSWORD', '*_PASSWD', '*_CREDENTIALS', 'AWS_*', 'AZURE_*', 'GCP_*',
  'GOOGLE_APPLICATION_CREDENTIALS', 'SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'NODE_AUTH_TOKEN', 'VAULT_*',
]

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const MAX_VALUE_BYTES = 32_768

function matcher(patterns: readonly string[]): RegExp {
  if (!patterns.length) return /$^/
  const alternatives = patterns.map((pattern) => pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*'))
  return new RegExp(`^(?:${alternatives.join('|')})$`, 'i')
}

/**
 * Builds a session's environment: the inherited one without denied names, then the configured `set`,
 * then what the call asked for (checked: variable names only, no NUL, bounded values), then the terminal
 * type every full-screen program needs.
 */
export function sessionEnv(deny: readonly string[], set: Record<string, string>): (requested: Record<string, string> | undefined) => Record<string, string> {
  const denied = matcher(deny)
  return (requested) => {
    const env: Record<string, string> = {}
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !denied.test(name)) env[name] = value
    Object.assign(env, set)
    for (const [name, value] of Object.entries(requested ?? {})) {
      if (!NAME.test(name)) throw new InvalidEnvError(`env name ${JSON.stringify(name)} is not a variable name (letters, digits and _, not starting with a digit)`)
      if (value.includes('\0') || Buffer.byteLength(value) > MAX_VALUE_BYTES) throw new InvalidEnvError(`env ${name}: values must hold no NUL character and at most ${MAX_VALUE_BYTES} bytes`)
      env[name] = value
    }
    env.TERM = 'xterm-256color'
    return env
  }
}
