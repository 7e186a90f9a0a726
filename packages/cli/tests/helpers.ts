import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll } from 'vitest'

/** The built executable: these tests run the real `cordage` command as a child process. */
export const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

export interface Outcome {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `node dist/bin.js ...args` in `cwd` with no provider keys in the environment. */
export function cordage(args: string[], options: { cwd: string; input?: string; env?: Record<string, string> }): Promise<Outcome> {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`)
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...options.env }
  for (const key of [
    'OPENAI_API_KEY',
    'DEEPSEEK_API_KEY',
    'OPENAI_BASE_URL',
    'CORDAGE_MODEL',
    'CORDAGE_PROVIDER',
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'ANTHROPIC_BASE_URL',
  ])
    if (!options.env?.[key]) delete env[key]
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { cwd: options.cwd, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: child.exitCode ?? (error as { code?: number } | null)?.code ?? null, stdout, stderr })
    })
    child.stdin!.end(options.input ?? '')
  })
}

/** A fresh temporary directory holding `files`, removed after the test file. */
export function project(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'cordage-cli-test-'))
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A local plugin with one raw tool, `echo`, whose value is `{ said }` and content `echo: <said>`. */
export const echoPlugin = `
export const name = 'echo'
export const inject = ['tools']
export const Config = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (value) => value?.prefix === undefined || typeof value.prefix === 'string'
      ? { value: value ?? {} }
      : { issues: [{ message: 'expected string but got ' + JSON.stringify(value.prefix), path: ['prefix'] }] },
  },
}
export function apply(ctx, config) {
  const prefix = config.prefix ?? 'echo'
  ctx.tools.register({
    name: 'echo',
    description: 'Repeats what it is told.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    output: {
      schema: { type: 'object', properties: { said: { type: 'string' } }, required: ['said'], additionalProperties: false },
      render: (args, value) => [{ type: 'text', text: prefix + ': ' + value.said }],
    },
    execute: (args) => {
      if (typeof args?.text !== 'string') throw new Error('text must be a string')
      if (args.text === 'fail') throw new Error('asked to fail')
      return { said: args.text }
    },
    concurrency: 'parallel',
  })
}
`
