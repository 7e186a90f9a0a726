import type { ToolSchema } from '@cordage/registry'
import type { ToolView } from './agent-types.js'

/** The schemas offered to the model under `view`, and their names (undefined: every listed tool, no filter). */
export function applyToolView(listed: ToolSchema[], view: ToolView | undefined): { schemas: ToolSchema[]; names?: ReadonlySet<string> } {
  if (!view) return { schemas: listed }
  const allow = view.allow && new Set(view.allow)
  const schemas = allow ? listed.filter((schema) => allow.has(schema.name)) : [...listed]
  for (const extra of view.extra ?? []) {
    const at = schemas.findIndex((schema) => schema.name === extra.name)
    if (at >= 0) schemas[at] = extra
    else schemas.push(extra)
  }
  schemas.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return { schemas, names: new Set(schemas.map((schema) => schema.name)) }
}
