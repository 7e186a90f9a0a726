import { mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { createTestContext, testToolContract } from '@cordage/testing'
import * as shell from '../src/index.js'
import { Jobs } from '@cordage/plugin-jobs'
import { alive, readPid, setup, tempDir, value } from './helpers.js'

const contractRoot = tempDir()
testToolContract(shell, {
  config: { root: contractRoot },
  cases: [
    { tool: 'bash', arguments: { command: 'echo hello' } },
    { tool: 'bash', arguments: { command: 'echo oops >&2; exit 7' } },
    { tool: 'bash', arguments: { command: 'head -c 300000 /dev/zero | tr "\\0" x' } },
    { tool: 'bash', arguments: { command: 'echo hi', run_in_background: true }, expect: 'error' },
    { tool: 'bash', arguments: { command: 'pwd', cwd: '..' }, expect: 'error' },
    { tool: 'bash', arguments: { command: '' }, expect: 'error' },
  ],
})

// With the jobs service loaded first, background runs are part of the contract too.
testToolContract(shell, {
  before: [Jobs],
  config: { root: contractRoot },
  cases: [{ name: 'bash in the background with ctx.jobs', tool: 'bash', arguments: { command: 'echo hi', run_in_background: true } }],
})

describe('bash in the foreground', () => {
  it('returns a non-zero exit as a success value and renders stdout, stderr, then the exit code', async () => {
    const { bash } = await setup()
    const result = await bash({ command: 'echo out; echo err >&2; exit 3' })
    expect(value(result)).toMatchObject({
      kind: 'foreground',
      exitCode: 3,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
      timedOut: false,
      omittedBytes: { stdout: 0, stderr: 0 },
    })
    expect(contentText(result.content)).toMatchInlineSnapshot(`
      "out
      [stderr]
      err
      Exit code 3"
    `)
  })

  it('renders success without a status line, and (no output) when silent', async () => {
    const { bash } = await setup()
    expect(contentText((await bash({ command: 'printf "a\\nb\\n"' })).content)).toBe('a\nb')
    const silent = await bash({ command: 'true' })
    expect(value(silent)).toMatchObject({ exitCode: 0, stdout: '', stderr: '' })
    expect(contentText(silent.content)).toBe('(no output)')
  })

  it('reports a command that kills itself with SIGTERM as a signal, not an exit code', async () => {
    const { bash } = await setup()
    const result = await bash({ command: 'echo before; kill -TERM $$' })
    expect(value(result)).toMatchObject({ exitCode: null, signal: 'SIGTERM', stdout: 'before\n', timedOut: false })
    expect(contentText(result.content)).toBe('before\nTerminated by signal SIGTERM')
  })

  it('a timeout kills the whole tree, grandchildren included', async () => {
    const { bash, root } = await setup()
    const pidFile = join(root, 'grandchild.pid')
    const pending = bash({ command: `bash -c 'sleep 1234 & echo $! > ${pidFile}; wait' & wait`, timeout_ms: 800 })
    const grandchild = await readPid(pidFile)
    expect(alive(grandchild)).toBe(true)
    const result = await pending
    expect(value(result)).toMatchObject({ timedOut: true, signal: 'SIGTERM', exitCode: null })
    expect(contentText(result.content)).toBe('Timed out after 800 ms; the command and its children were killed (SIGTERM)')
    expect(alive(grandchild)).toBe(false)
  })

  it('escalates to SIGKILL when the tree ignores SIGTERM', async () => {
    const { bash, root } = await setup({ config: { killGraceMs: 200 } })
    const pidFile = join(root, 'stubborn.pid')
    const pending = bash({ command: `trap '' TERM; sleep 1235 & echo $! > ${pidFile}; wait; wait`, timeout_ms: 300 })
    const child = await readPid(pidFile)
    const result = await pending
    expect(value(result)).toMatchObject({ timedOut: true, signal: 'SIGKILL' })
    expect(alive(child)).toBe(false)
  })

  it('an aborted call kills the tree and settles as ABORTED after it is dead', async () => {
    const { bash, root } = await setup()
    const pidFile = join(root, 'abort.pid')
    const controller = new AbortController()
    const pending = bash({ command: `sleep 1236 & echo $! > ${pidFile}; wait` }, controller.signal)
    const child = await readPid(pidFile)
    controller.abort()
    const result = await pending
    expect(result.isError && result.error.info?.code).toBe('ABORTED')
    expect(alive(child)).toBe(false)
  })

  it('kills what the command left running in the background when it exits', async () => {
    const { bash, root } = await setup()
    const pidFile = join(root, 'leftover.pid')
    const result = await bash({ command: `sleep 1237 & echo $! > ${pidFile}; echo done` })
    expect(value(result)).toMatchObject({ exitCode: 0, stdout: 'done\n' })
    expect(alive(await readPid(pidFile))).toBe(false)
  })

  it('runs in cwd inside the root and denies escapes with INVALID_CWD', async () => {
    const { bash, root } = await setup()
    mkdirSync(join(root, 'sub'))
    const outside = tempDir()
    symlinkSync(outside, join(root, 'link-out'))
    expect(value(await bash({ command: 'pwd', cwd: 'sub' })).stdout).toBe(`${join(root, 'sub')}\n`)
    expect(value(await bash({ command: 'pwd' })).stdout).toBe(`${root}\n`)
    for (const cwd of ['..', '/', 'link-out', outside]) {
      const result = await bash({ command: 'pwd', cwd })
      expect(result.isError && result.error.info?.code, cwd).toBe('INVALID_CWD')
      expect(contentText(result.content)).toContain('outside the workspace root')
    }
    const missing = await bash({ command: 'pwd', cwd: 'nope' })
    expect(missing.isError && missing.error.message).toContain('cwd "nope" does not exist')
  })

  it('a missing shell is a clear SPAWN_FAILED failure', async () => {
    const { bash } = await setup({ config: { shell: '/nonexistent/bash' } })
    const result = await bash({ command: 'echo hi' })
    expect(result.isError && result.error.info?.code).toBe('SPAWN_FAILED')
    expect(contentText(result.content)).toMatch(/^Error: could not start the shell "\/nonexistent\/bash" in .*ENOENT/)
  })

  it('loads with no config, rooted at the working directory', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(shell)
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'pwd' } })
    expect(value(result).stdout).toBe(`${realpathSync(process.cwd())}\n`)
  })

  it('rejects a bad config at load', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(shell, { root: '/nonexistent/root' })).rejects.toThrow('config.root /nonexistent/root does not exist')
    await expect(ctx.plugin(shell, { defaultTimeoutMs: 10, maxTimeoutMs: 5 })).rejects.toThrow('defaultTimeoutMs')
  })
})

describe('bash environment', () => {
  const names = ['CORDAGE_TEST_API_KEY', 'CORDAGE_TEST_TOKEN', 'CORDAGE_TEST_SECRET', 'AWS_CORDAGE_TEST', 'CORDAGE_TEST_PLAIN']
  for (const name of names) process.env[name] = `value-of-${name}`
  afterAll(() => {
    for (const name of names) delete process.env[name]
  })

  it('strips credentials by default and passes the rest', async () => {
    const { bash } = await setup()
    const env = value(await bash({ command: 'env' })).stdout as string
    expect(env).toContain('CORDAGE_TEST_PLAIN=value-of-CORDAGE_TEST_PLAIN')
    expect(env).toContain('PATH=')
    for (const name of names.slice(0, 4)) expect(env).not.toContain(name)
  })

  it('lets exact names through, honours a narrow allow-list and sets variables', async () => {
    const { bash } = await setup({ config: { env: { allow: ['PATH', 'CORDAGE_TEST_TOKEN', 'CORDAGE_TEST_*'], set: { EXTRA: '1' } } } })
    const env = value(await bash({ command: 'env' })).stdout as string
    expect(
      env
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('=')[0])
        .sort(),
    ).toEqual(expect.arrayContaining(['CORDAGE_TEST_TOKEN', 'EXTRA', 'PATH']))
    expect(env).toContain('CORDAGE_TEST_PLAIN=')
    expect(env).not.toContain('CORDAGE_TEST_API_KEY')
    expect(env).not.toContain('CORDAGE_TEST_SECRET')
    expect(env).not.toContain('HOME=')
  })
})
