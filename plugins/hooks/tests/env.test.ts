import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { codeOf, pre, script, setup } from './helpers.js'

const SECRETS = { CORDAGE_HOOK_TEST_API_KEY: 'sk-1', CORDAGE_HOOK_TEST_TOKEN: 'tok-2', AWS_CORDAGE_HOOK_TEST: 'aws-3' }

async function hookEnvironment(config: object): Promise<Record<string, string>> {
  const hook = await script('cat >/dev/null\nenv > "$(dirname "$0")/env.txt"')
  const { ctx, fiber } = await setup({ hooks: pre(hook.path), ...config })
  expect(codeOf(await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } }))).toBe('OK')
  await fiber.dispose()
  const lines = (await readFile(join(hook.dir, 'env.txt'), 'utf8')).split('\n').filter(Boolean)
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
}

describe('the environment of hook commands', () => {
  beforeEach(() => void Object.assign(process.env, SECRETS, { CORDAGE_HOOK_TEST_PLAIN: 'plain' }))
  afterEach(() => {
    for (const key of [...Object.keys(SECRETS), 'CORDAGE_HOOK_TEST_PLAIN']) delete process.env[key]
  })

  it('withholds credentials as the shell plugin does, keeping the rest and CLAUDE_PROJECT_DIR', async () => {
    const env = await hookEnvironment({ cwd: '/tmp' })
    for (const key of Object.keys(SECRETS)) expect(env).not.toHaveProperty(key)
    expect(env.CORDAGE_HOOK_TEST_PLAIN).toBe('plain')
    expect(env.PATH).toBe(process.env.PATH)
    expect(env.CLAUDE_PROJECT_DIR).toBe('/tmp')
  })

  it('follows an env policy: an exactly named variable passes, set adds one', async () => {
    const env = await hookEnvironment({ env: { allow: ['*', 'CORDAGE_HOOK_TEST_TOKEN'], set: { EXTRA: '1' } } })
    expect(env.CORDAGE_HOOK_TEST_TOKEN).toBe('tok-2')
    expect(env).not.toHaveProperty('CORDAGE_HOOK_TEST_API_KEY')
    expect(env.EXTRA).toBe('1')
  })
})
