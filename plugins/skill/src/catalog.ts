import type { SkillEntry } from './discover.js'

/** Escapes text for an XML-ish prompt block. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** One line, whitespace collapsed, at most `max` characters (an ellipsis marks the cut). */
export function catalogDescription(description: string, max: number): string {
  const flat = description.replace(/\s+/g, ' ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1)).trimEnd()}…`
}

/** The system prompt section listing the model-invocable skills; undefined when there are none. */
export function catalogText(skills: Iterable<SkillEntry>, maxDescription: number): string | undefined {
  const lines: string[] = []
  for (const skill of skills) {
    if (skill.modelInvocable && skill.size === undefined) lines.push(`- \`${skill.name}\`: ${escapeXml(catalogDescription(skill.description, maxDescription))}`)
  }
  if (!lines.length) return undefined
  return [
    'Skills are instructions for specific tasks. If the user names a skill, or the task clearly matches one, call the `skill` tool with its exact name before acting, then follow what it returns.',
    '<available_skills>',
    ...lines,
    '</available_skills>',
  ].join('\n')
}
