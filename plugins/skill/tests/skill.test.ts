import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Agent } from '@cordage/agent'
import { contentText } from '@cordage/core'
import type { SystemSection } from '@cordage/services'
import { createTestContext, ScriptedModel, testToolContract } from '@cordage/testing'
import * as SkillPlugin from '../src/index.js'

function skill(root: string, folder: string, front: string, body = `Do the ${folder} thing.`): string {
  mkdirSync(join(root, folder), { recursive: true })
  const file = join(root, folder, 'SKILL.md')
  writeFileSync(file, `---\n${front}\n---\n${body}\n`)
  return file
}

function workspace() {
  const cwd = mkdtempSync(join(tmpdir(), 'cordage-skill-'))
  const project = join(cwd, '.cordage/skills')
  const user = join(cwd, 'home-skills')
  skill(project, 'deploy', 'name: deploy\ndescription: Deploy the app to staging.\nallowed-tools: bash, read', 'Run ./deploy.sh from scripts/.')
  return { cwd, project, user, config: { cwd, roots: ['.cordage/skills', user] } }
}

async function setup(config: object) {
  const ctx = await createTestContext({ print: false })
  const fiber = await ctx.plugin(SkillPlugin, config)
  const system = () => {
    const sections: SystemSection[] = []
    ctx.emit('agent/system', sections)
    return sections
  }
  return { ctx, fiber, system }
}

testToolContract(SkillPlugin, {
  config: () => workspace().config,
  cases: [
    { tool: 'skill', arguments: { name: 'deploy' } },
    { tool: 'skill', arguments: { name: 'missing' }, expect: 'error' },
    { tool: 'skill', arguments: { name: 'Bad_Name' }, expect: 'error' },
  ],
})

describe('skill', () => {
  it('returns the body and the folder of a SKILL.md, rendered as a skill_content block', async () => {
    const { cwd, config } = workspace()
    const { ctx } = await setup(config)
    const result = await ctx.tools.execute({ name: 'skill', arguments: { name: 'deploy' } })
    if (result.isError) throw new Error(result.error.message)
    const dir = join(cwd, '.cordage/skills/deploy')
    expect(result.value).toEqual({
      name: 'deploy',
      provider: 'filesystem',
      resourceBase: { kind: 'directory', path: dir },
      content: 'Run ./deploy.sh from scripts/.',
    })
    expect(contentText(result.content)).toBe(
      `<skill_content name="deploy">\n<skill_resources>\nBase directory for this skill: ${dir}\nResolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nRun ./deploy.sh from scripts/.\n</skill_instructions>\n</skill_content>`,
    )
  })

  it('adds the catalog to the system prompt of a new conversation', async () => {
    const { config } = workspace()
    const { ctx } = await setup(config)
    const model = await ctx.plugin(ScriptedModel, { turns: [{ text: 'ok' }] })
    const agent = new Agent(ctx, { system: 'Base prompt.' })
    await agent.run('hi')
    void model
    const first = agent.messages[0]!
    expect(first.role).toBe('system')
    expect((first as { content: string }).content).toBe(
      'Base prompt.\n\nSkills are instructions for specific tasks. If the user names a skill, or the task clearly matches one, call the `skill` tool with its exact name before acting, then follow what it returns.\n<available_skills>\n- `deploy`: Deploy the app to staging.\n</available_skills>',
    )
  })

  it('reports bad front matter at load naming the file, and keeps the other skills', async () => {
    const { project, config } = workspace()
    const bad = skill(project, 'broken', 'name: [unclosed\ndescription: x')
    const nameless = skill(project, 'nameless', 'description: has no name')
    writeFileSync(join(project, 'plain.md'), 'not a skill folder')
    mkdirSync(join(project, 'empty-folder'))
    const { ctx, system } = await setup(config)
    const warnings = ctx.logs.filter((log) => log.type === 'warn').map((log) => log.text)
    expect(warnings).toHaveLength(2)
    expect(warnings.find((text) => text.includes(bad))).toMatch(/not valid YAML/)
    expect(warnings.find((text) => text.includes(nameless))).toMatch(/"name" must be a kebab-case string/)
    expect(system()[0]!.text).toContain('- `deploy`: Deploy the app to staging.')
    // Reported once, not at every scan.
    system()
    await ctx.tools.execute({ name: 'skill', arguments: { name: 'deploy' } })
    expect(ctx.logs.filter((log) => log.type === 'warn')).toHaveLength(2)
  })

  it('lets the first root win a name, reads edits at once and lists new skills in the next catalog', async () => {
    const { project, user, config } = workspace()
    skill(user, 'deploy', 'name: deploy\ndescription: the user copy', 'user body')
    skill(user, 'lint', 'name: lint\ndescription: Lint the code.')
    const { ctx, system } = await setup(config)
    const first = await ctx.tools.execute({ name: 'skill', arguments: { name: 'deploy' } })
    expect(!first.isError && first.value).toMatchObject({ content: 'Run ./deploy.sh from scripts/.' })
    skill(project, 'deploy', 'name: deploy\ndescription: Deploy the app to staging.', 'edited body')
    const second = await ctx.tools.execute({ name: 'skill', arguments: { name: 'deploy' } })
    expect(!second.isError && second.value).toMatchObject({ content: 'edited body' })
    skill(project, 'release', 'name: release\ndescription: Cut a release.')
    expect(system()[0]!.text).toMatch(/- `deploy`: Deploy the app to staging.\n- `release`: Cut a release.\n- `lint`: Lint the code./)
  })

  it('hides skills with disable-model-invocation from the catalog and refuses to load them', async () => {
    const { project, config } = workspace()
    skill(project, 'secret', 'name: secret\ndescription: user only\ndisable-model-invocation: true')
    const { ctx, system } = await setup(config)
    expect(system()[0]!.text).not.toContain('secret')
    const result = await ctx.tools.execute({ name: 'skill', arguments: { name: 'secret' } })
    expect(result.isError && result.error.info?.code).toBe('SKILL_NOT_INVOCABLE')
  })

  it('fails unknown and malformed names with a message for the model', async () => {
    const { config } = workspace()
    const { ctx } = await setup(config)
    const unknown = await ctx.tools.execute({ name: 'skill', arguments: { name: 'nope' } })
    expect(unknown.isError && unknown.error.info?.code).toBe('UNKNOWN_SKILL')
    expect(contentText(unknown.content)).toBe('Error: skill "nope" is unknown or no longer available; available skills: deploy')
    const bad = await ctx.tools.execute({ name: 'skill', arguments: { name: 'Bad_Name' } })
    expect(bad.isError && bad.error.info?.code).toBe('INVALID_ARGS')
  })

  it('caps long descriptions and escapes markup in the catalog', async () => {
    const { project, config } = workspace()
    skill(project, 'long', `name: long\ndescription: "${'x'.repeat(700)}"`)
    skill(project, 'markup', 'name: markup\ndescription: "use <b> & </available_skills>"')
    const { system } = await setup(config)
    const text = system()[0]!.text
    expect(text).toContain(`- \`long\`: ${'x'.repeat(499)}…\n`)
    expect(text).toContain('- `markup`: use &lt;b&gt; &amp; &lt;/available_skills&gt;')
  })

  it('adds no section when there are no skills and missing roots are not errors', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cordage-skill-'))
    const { ctx, system } = await setup({ cwd, roots: ['nowhere', '/definitely/not/here'] })
    expect(system()).toEqual([])
    expect(ctx.logs.filter((log) => log.type === 'warn')).toEqual([])
  })

  it('rejects a bad config at load', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(SkillPlugin, { roots: 'not-a-list' } as never)).rejects.toThrow()
    expect(ctx.tools.get('skill')).toBeUndefined()
  })

  it('unloading removes the tool and the system prompt listener', async () => {
    const { config } = workspace()
    const { ctx, fiber, system } = await setup(config)
    expect(system()).toHaveLength(1)
    await fiber.dispose()
    expect(ctx.tools.get('skill')).toBeUndefined()
    expect(system()).toEqual([])
  })
})
