import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { SystemSection } from '@cordage/services'
import { SkillCatalog } from './cache.js'
import { catalogText } from './catalog.js'
import { resolveRoot } from './discover.js'
import { skillTool } from './skill.js'

/** Plugin name. */
export const name = 'skill'
/** Needs the tool registry. */
export const inject = ['tools']

/** Plugin configuration (see the README's Config table). */
export interface Config {
  roots: string[]
  cwd?: string
  descriptionMaxLength: number
  maxSkillBytes: number
}

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG naming the key. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    roots: Schema.array(Schema.string().min(1))
      .default(['.cordage/skills', '.claude/skills', '~/.claude/skills'])
      .description(
        'Folders holding one sub-folder per skill (<root>/<name>/SKILL.md), in rank order: the first root with a name wins. Relative to cwd; ~/ is the home directory.',
      ),
    cwd: Schema.string().description('Base of relative roots (default: the process working directory).'),
    descriptionMaxLength: Schema.natural().min(20).default(500).description('Longest description shown in the catalog (longer ones are cut with an ellipsis).'),
    maxSkillBytes: Schema.natural()
      .min(1024)
      .default(256 * 1024)
      .description('Largest SKILL.md the skill tool loads; a larger one is left out of the catalog and fails naming this limit.'),
  }),
)

export { discoverSkills, parseSkillFile, type SkillEntry, type SkillProblem } from './discover.js'
export { UnknownSkillError, SkillNotInvocableError, SkillTooLargeError, SkillUnreadableError } from './errors.js'

/** Registers `skill` and adds the skill catalog to every new conversation's system prompt. */
export function apply(ctx: Context, config: Config): void {
  const logger = ctx.logger('skill')
  const roots = config.roots.map((root) => resolveRoot(root, config.cwd ?? process.cwd()))
  const reported = new Set<string>()
  // The catalog is scanned again only when a root, a skill folder or a SKILL.md changed, so skills added
  // or edited while running are picked up without a file watcher. Each bad file is reported once.
  const catalog = new SkillCatalog(roots, config.maxSkillBytes, (problems) => {
    for (const problem of problems) {
      const key = `${problem.file}\n${problem.message}`
      if (reported.has(key)) continue
      reported.add(key)
      logger.warn(`skipped ${problem.file}: ${problem.message}`)
    }
  })
  const skills = catalog.current()
  logger.info(`${skills.size} skill${skills.size === 1 ? '' : 's'} from ${roots.join(', ')}`)
  const tools: ToolRegistry = ctx.tools
  tools.register(skillTool(catalog, config.maxSkillBytes))
  ctx.on('agent/system', (sections: SystemSection[]) => {
    const text = catalogText(catalog.current().values(), config.descriptionMaxLength)
    if (text) sections.push({ source: 'skill', text })
  })
}

/** The plugin as one object. */
export default { name, inject, Config, apply }
