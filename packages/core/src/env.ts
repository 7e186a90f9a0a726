import Schema from 'schemastery'

/**
 * Names of variables withheld from commands unless allowed by exact name: credentials and the means to
 * reach them. Patterns are case-insensitive; `*` matches any run of characters.
 */
export const DEFAULT_ENV_DENY: readonly string[] = [
  '*_API_KEY',
  '*_APIKEY',
  'API_KEY',
  '*_KEY',
  '*_KEYS',
  '*_TOKEN',
  'TOKEN',
  '*_TOKENS',
  '*_SECRET',
  'SECRET',
  '*_SECRET_*',
  '*_SECRETS',
  '*PASSWORD*',
  '*PASSWD*',
  '*_PASS',
  '*_PWD',
  '*_PAT',
  '*_JWT',
  '*_DSN',
  '*WEBHOOK*',
  '*PRIVATE_KEY*',
  '*_PEM',
  '*_CREDENTIALS',
  '*_CREDENTIAL',
  '*_AUTH',
  'AWS_*',
  'AZURE_*',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GCP_*',
  'SSH_AUTH_SOCK',
  'GPG_AGENT_INFO',
  'NPM_CONFIG__AUTH*',
  'NODE_AUTH_TOKEN',
  'DOCKER_AUTH_CONFIG',
  'KUBECONFIG',
  'VAULT_*',
]

/**
 * Values withheld whatever the variable's name, because a credential is in them: a URL with userinfo
 * (`postgres://app:pw@db`, `redis://:pw@cache`, a Sentry DSN's `https://key@host`), a PEM block
 * (`-----BEGIN … KEY-----`), a JSON Web Token (`eyJ….eyJ….…`).
 */
// The look-behind starts a scheme only where one can start, keeping the test linear on long values.
const URL_WITH_USERINFO = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^/?#\s@]+@/i
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]+-----/
const JSON_WEB_TOKEN = /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\./

/** Whether `value` holds a credential by its shape (see {@link EnvPolicy}). */
export function isSecretValue(value: string): boolean {
  // Each shape has a marker a plain search finds: most values are tested without running a pattern.
  return (
    (value.includes('@') && URL_WITH_USERINFO.test(value)) ||
    (value.includes('-----BEGIN ') && PEM_BLOCK.test(value)) ||
    (value.includes('eyJ') && JSON_WEB_TOKEN.test(value))
  )
}

/**
 * The environment given to programs a plugin spawns (shell commands, hooks, terminal sessions). The one
 * rule, in order:
 * 1. A variable named exactly in `allow` (no `*`) passes, whatever `deny` says and whatever its value.
 * 2. Otherwise it passes when its name matches an `allow` pattern, matches no `deny` pattern
 *    (default {@link DEFAULT_ENV_DENY}), and — unless `denyValues` is false — its value does not hold a
 *    credential by shape: a URL with userinfo, a PEM block or a JSON Web Token.
 * 3. `set` is applied last (added or overridden, never filtered).
 * Name patterns are case-insensitive; `*` matches any run of characters.
 */
export interface EnvPolicy {
  allow: string[]
  deny: string[]
  set: Record<string, string>
  /** Withhold values that hold a credential by shape (default true). */
  denyValues?: boolean
}

const MAX_VERDICTS = 4096

function compile(patterns: readonly string[]): RegExp {
  if (!patterns.length) return /$^/
  const alternatives = patterns.map((pattern) =>
    pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*'),
  )
  return new RegExp(`^(?:${alternatives.join('|')})$`, 'i')
}

/** Builds the filter {@link EnvPolicy} describes (so `allow: ['*', 'GITHUB_TOKEN']` passes that one token through). */
export function envFilter(policy: EnvPolicy): (source: Readonly<Record<string, string | undefined>>) => Record<string, string> {
  const allow = compile(policy.allow)
  const deny = compile(policy.deny)
  const exact = new Set(policy.allow.filter((pattern) => !pattern.includes('*')).map((name) => name.toUpperCase()))
  const denyValues = policy.denyValues ?? true
  const passes = (name: string, value: string) =>
    exact.has(name.toUpperCase()) || (allow.test(name) && !deny.test(name) && !(denyValues && isSecretValue(value)))
  // The verdict for each name's last value: an environment rarely changes between spawns, and the name
  // patterns cost more than the lookup. Bounded, for sources that are not the process's environment.
  const verdicts = new Map<string, { value: string; pass: boolean }>()
  return (source) => {
    const env: Record<string, string> = {}
    // Names, then one read each: `Object.entries(process.env)` costs half as much again (each entry an array).
    for (const name of Object.keys(source)) {
      const value = source[name]
      if (value === undefined) continue
      let verdict = verdicts.get(name)
      if (verdict?.value !== value) {
        if (verdicts.size >= MAX_VERDICTS) verdicts.clear()
        verdicts.set(name, (verdict = { value, pass: passes(name, value) }))
      }
      if (verdict.pass) env[name] = value
    }
    return Object.assign(env, policy.set)
  }
}

/**
 * The `env` config of plugins that spawn programs (shell, hooks, terminal): which inherited variables
 * pass (`allow`, default all), which are withheld (`deny`, default the credential list) and what is set.
 * `what` names the programs in the descriptions ("commands", "hooks", …).
 */
export function envPolicySchema(what: string): Schema<Partial<EnvPolicy> | undefined, EnvPolicy> {
  return Schema.object({
    allow: Schema.array(Schema.string()).default(['*']).description(`Inherited variables passed to ${what} (patterns; exact names override deny).`),
    deny: Schema.array(Schema.string())
      .default([...DEFAULT_ENV_DENY])
      .description(`Inherited variables withheld from ${what} (patterns, case-insensitive).`),
    set: Schema.dict(Schema.string()).default({}).description('Variables added or overridden.'),
    denyValues: Schema.boolean()
      .default(true)
      .description(`Also withhold inherited values that hold a credential by shape (a URL with userinfo, a PEM block, a JWT) from ${what}.`),
  }).default({ allow: ['*'], deny: [...DEFAULT_ENV_DENY], set: {}, denyValues: true }) as Schema<Partial<EnvPolicy> | undefined, EnvPolicy>
}
