/**
 * Credentials as they appear in real environments, each of which a spawned program must not inherit:
 * some caught by name, some only by value (a URL with userinfo, a PEM block, a JWT). For env tests.
 */
export const credentialSamples: Readonly<Record<string, string>> = {
  DATABASE_URL: 'postgres://app:hunter2@db.internal:5432/app',
  REDIS_URL: 'redis://:s3cret@cache.internal:6379/0',
  PGPASSWORD: 'hunter2',
  MYSQL_PWD: 'hunter2',
  GH_PAT: 'ghp_0123456789abcdefghijklmnopqrstuvwxyz',
  GITHUB_PAT: 'github_pat_0123456789abcdefghijklmnop',
  CI_JOB_JWT: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2lnbmF0dXJl',
  SENTRY_DSN: 'https://0123456789abcdef@o1.ingest.sentry.io/42',
  SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX',
  PRIVATE_KEY_PEM: '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n',
  CORDAGE_SAMPLE_UPSTREAM: 'https://deploy:tok3n@git.example.com/repo.git',
  CORDAGE_SAMPLE_BLOB: 'key=-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
  CORDAGE_SAMPLE_SESSION: 'eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoiYWRtaW4ifQ.dGVzdHNpZ25hdHVyZQ',
}

/** Look-alikes a spawned program must still inherit: no userinfo, no key material. */
export const harmlessSamples: Readonly<Record<string, string>> = {
  CORDAGE_SAMPLE_PLAIN_URL: 'postgres://db.internal:5432/app',
  CORDAGE_SAMPLE_EMAIL: 'dev@example.com',
  CORDAGE_SAMPLE_GIT_REMOTE: 'git@github.com:owner/repo.git',
  CORDAGE_SAMPLE_QUERY: 'https://example.com/search?q=a@b',
}

/** Sets both sample sets in `process.env`; returns the undo. */
export function exportSamples(): () => void {
  const names = [...Object.keys(credentialSamples), ...Object.keys(harmlessSamples)]
  const before = new Map(names.map((name) => [name, process.env[name]]))
  Object.assign(process.env, credentialSamples, harmlessSamples)
  return () => {
    for (const [name, value] of before) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}
