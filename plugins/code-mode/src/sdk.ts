import type { JsonSchemaNode } from '@cordage/core'
import { docText, propertyKey, toType, type Walk } from './sdk-types.js'

/** The part of a listed tool the SDK is generated from. */
export interface SdkTool {
  name: string
  description: string
  parameters: JsonSchemaNode
  outputSchema: JsonSchemaNode
}

// An object type printed at least this often and this long is declared once, by name.
const SHARED_MIN_COUNT = 2
const SHARED_MIN_LENGTH = 40

const pascal = (label: string) =>
  label.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_match, _sep, char: string) => char.toUpperCase()).replace(/^[^A-Za-z]+/, '')

/**
 * Names the object types printed more than once (after the property names they appeared under) and
 * puts the names in their place, longest type first so an outer type is named before the ones inside it.
 */
function shareTypes(lines: string[], objects: Map<string, { count: number; labels: string[] }>, taken: Set<string>): string[] {
  const shared = [...objects]
    .filter(([text, seen]) => seen.count >= SHARED_MIN_COUNT && text.length >= SHARED_MIN_LENGTH)
    .sort(([a], [b]) => b.length - a.length || (a < b ? -1 : 1))
  const aliases: Array<{ name: string; text: string }> = []
  for (const [text, seen] of shared) {
    // Found under two names (stdout, stderr): named after both.
    const base = seen.labels.slice(0, 2).map(pascal).join('Or') || 'Shared'
    let name = base
    for (let n = 2; taken.has(name); n++) name = `${base}${n}`
    taken.add(name)
    // An earlier (longer) replacement may have consumed every occurrence.
    if (!lines.some((line) => line.includes(text)) && !aliases.some((alias) => alias.text.includes(text))) continue
    for (let i = 0; i < lines.length; i++) lines[i] = lines[i]!.split(text).join(name)
    for (const alias of aliases) alias.text = alias.text.split(text).join(name)
    aliases.push({ name, text })
  }
  return aliases.map((alias) => `type ${alias.name} = ${alias.text}`).sort()
}

/**
 * The SDK in `run_code`'s description: each tool's value type on one line, object types that recur
 * declared once by name, and the `tools` object typed from them. Arguments are not repeated (they are
 * each tool's own parameters, which the model already has); `describeTool(name)` gives the full
 * declaration with docs. Deterministic: the same tools (in `list()` order) give byte-identical text.
 */
export function generateSdk(tools: readonly SdkTool[]): string {
  const objects = new Map<string, { count: number; labels: string[] }>()
  const outputs = tools.map((tool) => {
    const walk: Walk = { root: tool.outputSchema, style: { compact: true, readonly: false }, refs: [], objects }
    return `${propertyKey(tool.name, true)}: ${toType(tool.outputSchema, '', walk, 0)}`
  })
  const taken = new Set(['JsonValue', 'ToolArgsMap', 'ToolOutputMap', 'ToolCallError'])
  const aliases = shareTypes(outputs, objects, taken)
  const declarations = [...aliases, `interface ToolOutputMap {${outputs.length ? `\n${outputs.join('\n')}\n` : ''}}`]
  return [
    // Only declared when a value type uses it (a schema that admits any JSON).
    ...(declarations.some((line) => line.includes('JsonValue'))
      ? ['type JsonValue = null | boolean | number | string | JsonValue[] | {[key: string]: JsonValue}']
      : []),
    ...declarations,
    "type ToolArgsMap = {[N in keyof ToolOutputMap]: object} // each tool's own parameters",
    'declare const tools: {[N in keyof ToolOutputMap]: (args: ToolArgsMap[N]) => Promise<ToolOutputMap[N]>}',
    'declare class ToolCallError extends Error {toolName: string; code: string; info?: {name: string, code: string}}',
    "declare function describeTool(name: keyof ToolOutputMap): Promise<string> // a tool's TypeScript with docs",
    '',
  ].join('\n')
}

/**
 * One tool's full declaration, what `describeTool(name)` returns inside a program: its description,
 * then `tools.<name>` with the arguments and the (readonly) value typed property by property, with the
 * schemas' descriptions as JSDoc.
 */
export function describeToolSdk(tool: SdkTool): string {
  const args = toType(tool.parameters, '', { root: tool.parameters, style: { compact: false, readonly: false }, refs: [] }, 0)
  const value = toType(tool.outputSchema, '', { root: tool.outputSchema, style: { compact: false, readonly: true }, refs: [] }, 0)
  const doc = (tool.description ?? '')
    .split('\n')
    .map((line) => docText(line, 10_000) ?? '')
    .join('\n * ')
    .trim()
  const member = /^[A-Za-z_$][\w$]*$/.test(tool.name) ? `.${tool.name}` : `[${JSON.stringify(tool.name)}]`
  return `/**\n * ${doc}\n */\ntools${member}(args: ${args}): Promise<${value}>\n`
}
