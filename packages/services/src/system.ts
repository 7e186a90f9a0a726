/**
 * A section a plugin adds to an agent's system prompt (a skill catalog, plan-mode instructions):
 * `source` names the plugin, `text` is appended after the base prompt, separated by a blank line.
 */
export interface SystemSection {
  source: string
  text: string
}

/** Joins the base prompt and the sections in order; undefined when there is nothing to say. */
export function composeSystem(base: string | undefined, sections: readonly SystemSection[]): string | undefined {
  const parts = [base, ...sections.map((section) => section.text)].filter((part): part is string => typeof part === 'string' && part.trim() !== '')
  return parts.length ? parts.join('\n\n') : undefined
}
