import Schema from 'schemastery'
import { defineTool, type ToolDefinition, errorMessage } from '@cordage/core'
import { escapeXml } from './catalog.js'
import type { SkillCatalog } from './cache.js'
import { parseSkillFile, SKILL_NAME } from './discover.js'
import { SkillNotInvocableError, SkillTooLargeError, SkillUnreadableError, UnknownSkillError } from './errors.js'
import { readSkillFile, SkillFileError } from './skill-file.js'

const Parameters = Schema.object({
  name: Schema.string().pattern(SKILL_NAME).required().description('e.g. "deploy-app".'),
})

const Output = Schema.object({
  name: Schema.string().required(),
  provider: Schema.string().required().description('Where the skill came from: "filesystem".'),
  resourceBase: Schema.object({
    kind: Schema.const('directory' as const).required(),
    path: Schema.string().required().description("Absolute folder the skill's relative paths resolve against."),
  }),
  content: Schema.string().required().description('The instructions: SKILL.md without its front matter.'),
})

/** `skill`: loads a skill's instructions, read fresh (bounded, inside the roots) on every call. */
export function skillTool(catalog: SkillCatalog, maxSkillBytes: number): ToolDefinition {
  return defineTool({
    name: 'skill',
    description:
      'Load the full instructions for an available skill. Call this with the exact skill name from the skill catalog in the system prompt before acting on a task that names or clearly matches that skill.',
    parameters: Parameters,
    output: {
      schema: Output,
      render: (_args, value) => {
        const resources = value.resourceBase
          ? `Base directory for this skill: ${value.resourceBase.path}\nResolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.`
          : 'This skill has no resource directory.'
        const text = `<skill_content name="${escapeXml(value.name)}">\n<skill_resources>\n${resources}\n</skill_resources>\n\n<skill_instructions>\n${value.content}\n</skill_instructions>\n</skill_content>`
        return [{ type: 'text', text }]
      },
    },
    concurrency: 'parallel',
    annotations: { readOnlyHint: true },
    execute: (args) => {
      const skills = catalog.current()
      const skill = skills.get(args.name)
      if (!skill)
        throw new UnknownSkillError(
          args.name,
          [...skills.values()].filter((entry) => entry.modelInvocable && entry.size === undefined).map((entry) => entry.name),
        )
      if (!skill.modelInvocable) throw new SkillNotInvocableError(args.name)
      if (skill.size !== undefined) throw new SkillTooLargeError(args.name, skill.size, maxSkillBytes)
      // Read again: an edited body is used at once, without a new catalog.
      let text: string
      try {
        text = readSkillFile(skill.file, catalog.realRoots, maxSkillBytes, true).text
      } catch (error) {
        if (!(error instanceof SkillFileError)) throw error
        if (error.problem === 'too-large') throw new SkillTooLargeError(args.name, error.size!, maxSkillBytes)
        const outside = error.problem === 'outside-roots'
        throw new SkillUnreadableError(args.name, outside ? 'now resolves outside the skill roots' : error.message, outside)
      }
      let body: string
      try {
        body = parseSkillFile(text).body
      } catch (error) {
        throw new SkillUnreadableError(args.name, `no longer parses: ${errorMessage(error)}`, false)
      }
      return { name: skill.name, provider: 'filesystem', resourceBase: { kind: 'directory' as const, path: skill.dir }, content: body.trim() }
    },
  })
}
