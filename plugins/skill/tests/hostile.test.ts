import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { contentText, type ToolExecutionResult } from '@cordage/core'
import type { SystemSection } from '@cordage/services'
import { createTestContext } from '@cordage/testing'
import { SkillCatalog } from '../src/cache.js'
import * as SkillPlugin from '../src/index.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function skill(root: string, folder: string, description = `Do the ${folder} thing.`, body = `The ${folder} body.`): string {
  mkdirSync(join(root, folder), { recursive: true })
  const file = join(root, folder, 'SKILL.md')
  writeFileSync(file, `---\nname: ${folder}\ndescription: ${description}\n---\n${body}\n`)
  return file
}

/** A project root and an outside folder next to it, each with one skill. */
function workspace() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'cordage-skill-hostile-')))
  dirs.push(base)
  const root = join(base, 'skills')
  const outside = join(base, 'outside')
  skill(root, 'deploy')
  skill(outside, 'stolen', 'Reads like a skill.', 'OUTSIDE-SECRET')
  return { base, root, outside }
}

async function setup(config: object) {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(SkillPlugin, config)
  const catalog = () => {
    const sections: SystemSection[] = []
    ctx.emit('agent/system', sections)
    return sections.map((section) => section.text).join('\n')
  }
  const call = (name: string) => ctx.tools.execute({ name: 'skill', arguments: { name } })
  const warnings = () => ctx.logs.filter((log) => log.type === 'warn').map((log) => log.text)
  return { ctx, catalog, call, warnings }
}

const codeOf = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : 'OK')

describe('skill size is bounded', () => {
  it('leaves a 50 MB SKILL.md out of the catalog and fails loading it, naming the limit', async () => {
    const { root } = workspace()
    const file = skill(root, 'huge', 'Looks harmless.')
    truncateSync(file, 50 * 1024 * 1024)
    const { catalog, call, warnings } = await setup({ roots: [root] })
    expect(catalog()).toContain('`deploy`')
    expect(catalog()).not.toContain('huge')
    expect(warnings()).toEqual([`skipped ${file}: 52428800 bytes, over the limit of 262144 bytes (maxSkillBytes); it is not listed`])
    const result = await call('huge')
    expect(codeOf(result)).toBe('SKILL_TOO_LARGE')
    expect(contentText(result.content)).toBe(
      'Error: skill "huge" is 52428800 bytes, over the limit of 262144 bytes (the skill plugin\'s maxSkillBytes); it was not loaded. Tell the user: the SKILL.md must be shortened or the limit raised',
    )
  })

  it('takes the limit from config, and catches a file that grew past it after the catalog was made', async () => {
    const { root } = workspace()
    const file = skill(root, 'grows', 'Grows.', 'x'.repeat(1500))
    const small = await setup({ roots: [root], maxSkillBytes: 1024 })
    expect(codeOf(await small.call('grows'))).toBe('SKILL_TOO_LARGE')
    const large = await setup({ roots: [root], maxSkillBytes: 4096 })
    const loaded = await large.call('grows')
    expect(loaded.isError === false && (loaded.value as { content: string }).content).toBe('x'.repeat(1500))
    appendFileSync(file, 'y'.repeat(4096))
    expect(codeOf(await large.call('grows'))).toBe('SKILL_TOO_LARGE')
  })

  it('rejects a limit below 1024 bytes and a misspelt key at load', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(SkillPlugin, { maxSkillBytes: 10 })).rejects.toThrow(/maxSkillBytes/)
    await expect(ctx.plugin(SkillPlugin, { maxSkilBytes: 4096 } as never)).rejects.toThrow(/unknown key "maxSkilBytes"; did you mean "maxSkillBytes"/)
    expect(ctx.tools.get('skill')).toBeUndefined()
  })
})

describe('skills stay inside the roots', () => {
  it('refuses a skill folder that is a symlink out of the roots', async () => {
    const { root, outside } = workspace()
    symlinkSync(join(outside, 'stolen'), join(root, 'stolen'))
    const { catalog, call, warnings } = await setup({ roots: [root] })
    expect(catalog()).not.toContain('stolen')
    expect(warnings()).toEqual([
      `skipped ${join(root, 'stolen', 'SKILL.md')}: the folder resolves to ${join(outside, 'stolen')}, outside the skill roots (${root})`,
    ])
    const result = await call('stolen')
    expect(codeOf(result)).toBe('UNKNOWN_SKILL')
    expect(JSON.stringify(result)).not.toContain('OUTSIDE-SECRET')
  })

  it('refuses a SKILL.md that is a symlink out of the roots', async () => {
    const { root, outside } = workspace()
    mkdirSync(join(root, 'leak'))
    symlinkSync(join(outside, 'stolen', 'SKILL.md'), join(root, 'leak', 'SKILL.md'))
    const { catalog, call, warnings } = await setup({ roots: [root] })
    expect(catalog()).not.toContain('stolen')
    expect(warnings()).toEqual([`skipped ${join(root, 'leak', 'SKILL.md')}: resolves to ${join(outside, 'stolen', 'SKILL.md')}, outside the skill roots`])
    expect(codeOf(await call('stolen'))).toBe('UNKNOWN_SKILL')
  })

  it('follows links that stay inside the roots: a linked root, and a folder linked from one root into another', async () => {
    const { base, root, outside } = workspace()
    symlinkSync(root, join(base, 'linked-root'))
    symlinkSync(join(outside, 'stolen'), join(root, 'shared'))
    const { catalog, call } = await setup({ roots: [join(base, 'linked-root'), outside] })
    expect(catalog()).toContain('`deploy`')
    const shared = await call('stolen')
    expect(shared.isError === false && shared.value).toMatchObject({ content: 'OUTSIDE-SECRET', resourceBase: { path: join(outside, 'stolen') } })
  })

  it('drops a skill whose folder is swapped for a link out of the roots after the catalog was made', async () => {
    const { root, outside } = workspace()
    skill(root, 'stolen', 'Inside for now.', 'inside body')
    const { call } = await setup({ roots: [root] })
    expect(codeOf(await call('stolen'))).toBe('OK')
    rmSync(join(root, 'stolen'), { recursive: true })
    symlinkSync(join(outside, 'stolen'), join(root, 'stolen'))
    const result = await call('stolen')
    expect(codeOf(result)).toBe('UNKNOWN_SKILL')
    expect(JSON.stringify(result)).not.toContain('OUTSIDE-SECRET')
  })

  it('refuses a FIFO planted as SKILL.md without blocking', async () => {
    const { root } = workspace()
    mkdirSync(join(root, 'pipe'))
    execFileSync('mkfifo', [join(root, 'pipe', 'SKILL.md')])
    const { catalog, warnings } = await setup({ roots: [root] })
    expect(catalog()).toContain('`deploy`')
    expect(warnings()).toEqual([`skipped ${join(root, 'pipe', 'SKILL.md')}: is not a regular file`])
  })
})

describe('the catalog is cached until a file changes', () => {
  /** Timestamps an hour old, so nothing is within the window where a coarse clock could hide an edit. */
  function age(...paths: string[]) {
    const old = new Date(Date.now() - 3_600_000)
    for (const path of paths) utimesSync(path, old, old)
  }

  it('scans once while nothing changes, and again after an edit, an addition or a removal', async () => {
    const { root } = workspace()
    const lint = skill(root, 'lint')
    age(root, join(root, 'deploy'), join(root, 'deploy', 'SKILL.md'), join(root, 'lint'), lint)
    const catalog = new SkillCatalog([root], 4096, () => {})
    expect([...catalog.current().keys()]).toEqual(['deploy', 'lint'])
    for (let i = 0; i < 5; i++) catalog.current()
    expect(catalog.scans).toBe(1)
    // Same length, same (restored) modification time: the change time still tells.
    writeFileSync(lint, `---\nname: lint\ndescription: Do the LINT thing.\n---\nThe lint body.\n`)
    age(lint)
    expect(catalog.current().get('lint')!.description).toBe('Do the LINT thing.')
    expect(catalog.scans).toBe(2)
    skill(root, 'release')
    expect([...catalog.current().keys()]).toEqual(['deploy', 'lint', 'release'])
    rmSync(join(root, 'deploy'), { recursive: true })
    expect([...catalog.current().keys()]).toEqual(['lint', 'release'])
    // Edits right after a scan, within one tick of a coarse clock: same size, maybe the same timestamps.
    for (const word of ['ONE', 'TWO', 'SIX']) {
      skill(root, 'lint', `Do the ${word} thing.`)
      expect(catalog.current().get('lint')!.description).toBe(`Do the ${word} thing.`)
    }
  })
})
