import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createTestContext } from '@cordage/testing'
import { Spill } from '../src/index.js'
import { listFiles, repeatTool, tempDir, textOf, toolsPlugin } from './helpers.js'

const PROC_FIXTURE = fileURLToPath(new URL('./fixtures/proc-dir.ts', import.meta.url))

async function bounded(config: Record<string, unknown>) {
  const dir = join(await tempDir(), 'spill')
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(toolsPlugin(repeatTool()))
  await ctx.plugin(Spill, { dir, ...config })
  const text = textOf((await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'abcdefghij', count: 3_000 } })).content)
  return { text, files: await listFiles(dir) }
}

/** Runs the fixture with `dir`; resolves to its JSON line, or to `timedOut` after `limitMs` (the child is killed). */
function runProcFixture(dir: string, limitMs: number): Promise<{ timedOut: boolean; output?: { isError: boolean; text: string; warnings: string[] } }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=cordage-source', '--import', 'tsx', PROC_FIXTURE, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      resolve({ timedOut: true })
    }, limitMs)
    child.on('exit', () => {
      clearTimeout(timer)
      resolve({ timedOut: false, output: stdout ? JSON.parse(stdout) : undefined })
    })
  })
}

describe('spill config defaults', () => {
  it('loads with maxInlineBytes alone: head and tail default to a half and two fifths of it', async () => {
    const { text, files } = await bounded({ maxInlineBytes: 10_000 })
    expect(files).toHaveLength(1)
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(10_000)
    const [head, rest] = text.split('\n\n(Omitted ')
    expect(head).toBe('abcdefghij'.repeat(500))
    expect(rest!.split('\n\n')[1]).toBe('abcdefghij'.repeat(400))
  })

  it('an explicit head leaves the defaulted tail only the room that is left', async () => {
    const { text } = await bounded({ maxInlineBytes: 10_000, headBytes: 8_000 })
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(10_000)
    expect(text.startsWith('abcdefghij'.repeat(800) + '\n\n(Omitted ')).toBe(true)
  })

  it('a spill directory under /proc fails open (the output stays inline, a warning is logged) instead of hanging', async () => {
    const { timedOut, output } = await runProcFixture('/proc/cordage-spill-test/nested', 15_000)
    expect(timedOut).toBe(false)
    expect(output).toMatchObject({ isError: false, text: 'q'.repeat(5_000) })
    expect(output!.warnings.some((warning) => warning.includes('keeping it inline'))).toBe(true)
  }, 40_000)
})
