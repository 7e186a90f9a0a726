import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { ToolRegistry } from '@cordage/registry'
import type { SystemSection } from '@cordage/services'
import { catalogText } from './catalog.js'
import { discoverSkills, resolveRoot } from './discover.js'
import { skillTool } from './skill.js'

export const name = 'skill'
export const inject = ['tools']

export interface Config {
  roots: string[]
  cwd?: string
  descriptionMaxLength: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  roots: Schema.array(Schema.string().min(1))
    .default(['.cordage/skills', '.claude/skills', '~/.claude/skills'])
    .description(
      'Folders holding one sub-folder per skill (<root>/<name>/SKILL.md), in rank order: the first root with a name wins. Relative to cwd; ~/ is the home directory.',
    ),
  cwd: Schema.string().description('Base of relative roots (default: the process working directory).'),
  descriptionMaxLength: Schema.natural().min(20).default(500).description('Longest description shown in the catalog (longer ones are cut with an ellipsis).'),
})

export { discoverSkills, parseSkillFile, type SkillEntry, type SkillProblem } from './discover.js'
export { UnknownSkillError, SkillNotInvocableError } from './errors.js'

/** Registers `skill` and adds the skill catalog to every new conversation's system prompt. */
export function apply(ctx: Context, config: Config): void {
  const logger = ctx.logger('skill')
  const roots = config.roots.map((root) => resolveRoot(root, config.cwd ?? process.cwd()))
  const reported = new Set<string>()
  // Roots are scanned again for each conversation and call (a few small files), so skills added or
  // edited while running are picked up without a file watcher. Each bad file is reported once.
  const scan = () => {
    const { skills, problems } = discoverSkills(roots)
    for (const problem of problems) {
      const key = `${problem.file}\n${problem.message}`
      if (reported.has(key)) continue
      reported.add(key)
      logger.warn(`skipped ${problem.file}: ${problem.message}`)
    }
    return skills
  }
  const skills = scan()
  logger.info(`${skills.size} skill${skills.size === 1 ? '' : 's'} from ${roots.join(', ')}`)
  const tools: ToolRegistry = ctx.tools
  tools.register(skillTool(scan))
  ctx.on('agent/system', (sections: SystemSection[]) => {
    const text = catalogText(scan().values(), config.descriptionMaxLength)
    if (text) sections.push({ source: 'skill', text })
  })
}
