import { describe, expect, it } from 'vitest'
import { DEFAULT_ENV_DENY, envFilter, envPolicySchema, isSecretValue } from '../src/env.js'

describe('envFilter', () => {
  const source = { PATH: '/bin', OPENAI_API_KEY: 'k', github_token: 't', AWS_REGION: 'eu', HOME: '/h', EMPTY: undefined }

  it('withholds credentials by default, case-insensitively, and drops undefined values', () => {
    expect(envFilter({ allow: ['*'], deny: [...DEFAULT_ENV_DENY], set: {} })(source)).toEqual({ PATH: '/bin', HOME: '/h' })
  })

  it('lets an exact allow name through a deny pattern and applies set last', () => {
    const filter = envFilter({ allow: ['PATH', 'GITHUB_TOKEN'], deny: [...DEFAULT_ENV_DENY], set: { PATH: '/usr/bin' } })
    expect(filter(source)).toEqual({ PATH: '/usr/bin', github_token: 't' })
  })

  it('judges a value again when it changes between calls (verdicts are kept per value)', () => {
    const filter = envFilter({ allow: ['*'], deny: [...DEFAULT_ENV_DENY], set: {} })
    expect(filter({ DATABASE_URL: 'postgres://db/app' })).toEqual({ DATABASE_URL: 'postgres://db/app' })
    expect(filter({ DATABASE_URL: 'postgres://app:hunter2@db/app' })).toEqual({})
    expect(filter({ DATABASE_URL: 'postgres://db/app', LATER: 'x' })).toEqual({ DATABASE_URL: 'postgres://db/app', LATER: 'x' })
    expect(filter({ LATER: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl' })).toEqual({})
  })
})

describe('credentials by name and by value', () => {
  const policy = { allow: ['*'], deny: [...DEFAULT_ENV_DENY], set: {} }

  it.each(['PGPASSWORD', 'MYSQL_PWD', 'GH_PAT', 'GITHUB_PAT', 'CI_JOB_JWT', 'SENTRY_DSN', 'SLACK_WEBHOOK_URL', 'PRIVATE_KEY_PEM', 'mysql_root_password'])(
    'withholds %s by its name',
    (name) => {
      expect(envFilter(policy)({ [name]: 'plain', PATH: '/bin', PWD: '/w', OLDPWD: '/' })).toEqual({ PATH: '/bin', PWD: '/w', OLDPWD: '/' })
    },
  )

  it.each([
    ['a URL with a password (DATABASE_URL)', 'postgres://app:hunter2@db.internal:5432/app', true],
    ['a URL with a password only (REDIS_URL)', 'redis://:s3cret@cache:6379/0', true],
    ['a URL with a user only (a DSN key)', 'https://abc123@sentry.example/1', true],
    ['userinfo in a URL inside a longer value', 'remote=ssh://git:x@host/repo other', true],
    ['a PEM block', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', true],
    ['a JWT', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig', true],
    ['an @ in the query, not the authority', 'https://example.com?q=a@b', false],
    ['an scp-style git remote', 'git@github.com:o/r.git', false],
    ['an email address', 'dev@example.com', false],
  ])('%s: withheld = %s', (_name, value, withheld) => {
    expect(isSecretValue(value)).toBe(withheld)
    expect(envFilter(policy)({ CORDAGE_VALUE: value })).toEqual(withheld ? {} : { CORDAGE_VALUE: value })
  })

  it('passes a variable named exactly in allow whatever its value, and all values with denyValues: false', () => {
    const source = { DATABASE_URL: 'postgres://app:pw@db/app', UPSTREAM: 'https://deploy:token@git.example.com/repo.git' }
    expect(envFilter({ ...policy, allow: ['*', 'database_url'] })(source)).toEqual({ DATABASE_URL: source.DATABASE_URL })
    expect(envFilter({ ...policy, denyValues: false })(source)).toEqual(source)
  })

  it('defaults denyValues to true in the config schema', () => {
    expect(envPolicySchema('tests')(undefined).denyValues).toBe(true)
    expect(envPolicySchema('tests')({ denyValues: false }).denyValues).toBe(false)
  })
})

describe('value checks on hostile values', () => {
  it('stay linear on a megabyte of scheme-like characters', () => {
    const value = `${'a'.repeat(1 << 20)}@`
    const started = performance.now()
    expect(isSecretValue(value)).toBe(false)
    // A hang detector (quadratic backtracking would take minutes), not a speed measurement.
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})
