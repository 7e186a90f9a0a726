import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { Spill } from '@cordage/plugin-spill'
import Policy, { type RuleConfig } from '@cordage/plugin-policy'
import * as fs from '../src/index.js'
import { tempDir, writeTree } from './helpers.js'

const SECRET = 'hunter2-secret'

/** 30 files whose matching lines carry a secret: more than one page of grep results. */
async function project(): Promise<string> {
  const root = await tempDir()
  const files: Record<string, string> = {}
  for (let index = 0; index < 30; index++) files[`src/f${index}.ts`] = `// token ${SECRET} ${index}\n`
  await writeTree(root, files)
  return root
}

async function spilledText(dir: string): Promise<string> {
  const names = await readdir(dir).catch(() => [] as string[])
  return (await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')))).join('\n')
}

describe.each([
  ['spill, policy, fs', true],
  ['fs, policy, spill', false],
])('glob/grep paging under policy (%s)', (_order, spillFirst) => {
  async function setup(rules: RuleConfig[]) {
    const root = await project()
    const spillDir = await tempDir('cordage-spill-')
    const ctx = await createTestContext()
    if (spillFirst) await ctx.plugin(Spill, { dir: spillDir })
    if (spillFirst) await ctx.plugin(Policy, { rules })
    await ctx.plugin(fs, { root, pageSize: 5 })
    if (!spillFirst) await ctx.plugin(Policy, { rules })
    if (!spillFirst) await ctx.plugin(Spill, { dir: spillDir })
    return { ctx, spillDir }
  }

  it('a blocked grep writes no spill file', async () => {
    const { ctx, spillDir } = await setup([{ tool: 'grep', action: 'block', feedback: 'searching for tokens is not allowed' }])
    const result = await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'token' } })
    expect(result.isError).toBe(true)
    expect(contentText(result.content)).toBe('searching for tokens is not allowed')
    expect(await spilledText(spillDir)).toBe('')
  })

  it('a redacted grep spills the redacted list, never the secret', async () => {
    const { ctx, spillDir } = await setup([{ tool: 'grep', action: 'redact-value', pointers: ['/matches/*/line'], replacement: '[redacted]' }])
    const result = await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'token' } })
    expect(result.isError).toBe(false)
    expect(contentText(result.content)).not.toContain(SECRET)
    const spilled = await spilledText(spillDir)
    expect(spilled).toContain('[redacted]')
    expect(spilled).not.toContain(SECRET)
  })

  it('content a policy replaced is left as the policy wrote it', async () => {
    const { ctx, spillDir } = await setup([{ tool: 'glob', action: 'replace-content', content: 'listing withheld' }])
    const result = await ctx.tools.execute({ name: 'glob', arguments: { pattern: '**/*.ts' } })
    expect(contentText(result.content)).toBe('listing withheld')
    expect(await spilledText(spillDir)).toBe('')
  })

  it('an untouched long grep still spills its full list', async () => {
    const { ctx, spillDir } = await setup([])
    const result = await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'token' } })
    expect(contentText(result.content)).toContain(spillDir)
    expect((await spilledText(spillDir)).split('\n').filter((line) => line.includes(SECRET))).toHaveLength(30)
  })
})
