import { ScaffoldError } from './errors.js'

/** Every name a new plugin package is known by, derived from the one its author typed. */
export interface PluginNames {
  /** The npm package: `cordage-plugin-word-stats`, `@me/cordage-plugin-word-stats` or `@cordage/plugin-word-stats`. */
  packageName: string
  /** The Cordis plugin name, kebab-case: `word-stats` (also the shorthand `cordage.yml` accepts). */
  name: string
  /** The example tool, snake_case as model-facing names are: `word_stats`. */
  tool: string
  /** camelCase, for identifiers in the code: `wordStats`. */
  camel: string
}

const KEBAB = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/
const SCOPE = /^@[a-z0-9][a-z0-9._-]*$/
// Tool names are at most 64 characters (provider function-name rules); leave room for a suffix.
const MAX_NAME = 50

/**
 * Names for `input`: `word-stats` or `cordage-plugin-word-stats` (the package is
 * `cordage-plugin-word-stats`, which `cordage.yml` also accepts as `word-stats`), or a scoped name
 * kept as typed (`@me/word-stats`). In the Cordage repository (`workspace`) the package is
 * `@cordage/plugin-<name>` and `input` must be the bare name.
 */
export function pluginNames(input: string, options: { workspace?: boolean } = {}): PluginNames {
  const [scope, bare] = input.startsWith('@') ? [input.slice(0, input.indexOf('/')), input.slice(input.indexOf('/') + 1)] : ['', input]
  if (scope && (!SCOPE.test(scope) || !input.includes('/')))
    throw new ScaffoldError('INVALID_NAME', `"${input}" is not a package name: a scope is @ followed by lowercase letters, digits, ".", "_" or "-", then "/"`)
  const name = bare.replace(/^cordage-plugin-/, '')
  if (!KEBAB.test(name) || name.length > MAX_NAME)
    throw new ScaffoldError(
      'INVALID_NAME',
      `"${input}" is not a plugin name: use kebab-case, lowercase letters and digits separated by single hyphens, at most ${MAX_NAME} characters (e.g. word-stats)`,
    )
  if (options.workspace && input !== name)
    throw new ScaffoldError('INVALID_NAME', `"${input}": in this repository give the bare name (e.g. ${name}); the package is named @cordage/plugin-${name}`)
  const packageName = options.workspace ? `@cordage/plugin-${name}` : scope ? input : `cordage-plugin-${name}`
  const camel = name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
  return { packageName, name, tool: name.replaceAll('-', '_'), camel }
}
