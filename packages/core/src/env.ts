import Schema from 'schemastery'

/**
 * Variables withheld from commands unless allowed by exact name: credentials and the means to reach
 * them. Patterns are case-insensitive; `*` matches any run of characters.
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
  '*_PASSWORD',
  'PASSWORD',
  '*_PASSWD',
  '*_PASS',
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

/** The environment policy: `allow` and `deny` are name patterns; `set` adds or overrides variables. */
export interface EnvPolicy {
  allow: string[]
  deny: string[]
  set: Record<string, string>
}

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

/**
 * Builds a filter: a variable passes when it matches `allow` and no `deny` pattern, or when `allow`
 * names it exactly (so `allow: ['*', 'GITHUB_TOKEN']` passes that one token through).
 */
export function envFilter(policy: EnvPolicy): (source: Readonly<Record<string, string | undefined>>) => Record<string, string> {
  const allow = compile(policy.allow)
  const deny = compile(policy.deny)
  const exact = new Set(policy.allow.filter((pattern) => !pattern.includes('*')).map((name) => name.toUpperCase()))
  return (source) => {
    const env: Record<string, string> = {}
    for (const [name, value] of Object.entries(source)) {
      if (value === undefined) continue
      if (exact.has(name.toUpperCase()) || (allow.test(name) && !deny.test(name))) env[name] = value
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
  }).default({ allow: ['*'], deny: [...DEFAULT_ENV_DENY], set: {} }) as Schema<Partial<EnvPolicy> | undefined, EnvPolicy>
}
