import { TOOL_ANNOTATION_KEYS, TOOL_NAME_PATTERN, ToolDefinitionError, checkSupportedSchema, formatViolations, type ToolDefinition } from '@cordage/core'

/** Throws `ToolDefinitionError` (nothing registered) when `definition` breaks a registration rule. */
export function checkDefinition(definition: ToolDefinition): void {
  if (!definition || typeof definition !== 'object') throw new ToolDefinitionError('a tool definition must be an object')
  const label = typeof definition.name === 'string' ? `tool "${definition.name}"` : 'tool'
  if (typeof definition.name !== 'string' || !TOOL_NAME_PATTERN.test(definition.name)) {
    throw new ToolDefinitionError(`${label}: the name must match ${TOOL_NAME_PATTERN} (letters, digits, _ and -, at most 64)`)
  }
  if (typeof definition.description !== 'string') throw new ToolDefinitionError(`${label}: description must be a string`)
  if (typeof definition.execute !== 'function') throw new ToolDefinitionError(`${label}: execute must be a function`)
  const output = definition.output as any
  if (!output || typeof output !== 'object') {
    throw new ToolDefinitionError(`${label}: output is required ({ schema, render }); tools return one JSON value and render it`)
  }
  if (typeof output.render !== 'function') throw new ToolDefinitionError(`${label}: output.render must be a function`)
  if (output.presentationMeta !== undefined && typeof output.presentationMeta !== 'function') {
    throw new ToolDefinitionError(`${label}: output.presentationMeta must be a function`)
  }
  if (typeof output.schema !== 'object' || output.schema === null || Array.isArray(output.schema)) {
    throw new ToolDefinitionError(`${label}: output.schema must be a JSON Schema object`)
  }
  const violations = [
    ...checkSupportedSchema(definition.parameters).map((v) => ({ path: `parameters${v.path}`, message: v.message })),
    ...checkSupportedSchema(output.schema).map((v) => ({ path: `output.schema${v.path}`, message: v.message })),
  ]
  if ((definition.parameters as any)?.type !== 'object')
    violations.unshift({ path: 'parameters/type', message: 'parameters must be an object schema ({ type: "object" })' })
  if (violations.length) throw new ToolDefinitionError(`${label}: unsupported schema:\n${formatViolations(violations)}`)
  const { timeoutMs, concurrency } = definition
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) {
    throw new ToolDefinitionError(`${label}: timeoutMs must be a positive number, got ${timeoutMs}`)
  }
  if (concurrency !== undefined && concurrency !== 'parallel' && concurrency !== 'exclusive' && typeof concurrency !== 'function') {
    throw new ToolDefinitionError(`${label}: concurrency must be 'parallel', 'exclusive' or a function`)
  }
  checkAnnotations(label, definition.annotations)
}

const ANNOTATION_KEYS: readonly string[] = TOOL_ANNOTATION_KEYS

/** `annotations` is absent or a plain object of known boolean hints: a typo (`readonlyHint`) must not pass as "no hint". */
function checkAnnotations(label: string, annotations: unknown): void {
  if (annotations === undefined) return
  if (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations)) {
    throw new ToolDefinitionError(`${label}: annotations must be an object of boolean hints (${ANNOTATION_KEYS.join(', ')})`)
  }
  for (const key of Reflect.ownKeys(annotations)) {
    if (typeof key !== 'string' || !ANNOTATION_KEYS.includes(key)) {
      throw new ToolDefinitionError(`${label}: annotations: unknown key ${String(key)} (valid keys: ${ANNOTATION_KEYS.join(', ')})`)
    }
    const value = Object.getOwnPropertyDescriptor(annotations, key)?.value
    if (typeof value !== 'boolean') throw new ToolDefinitionError(`${label}: annotations.${key} must be a boolean, got ${typeof value}`)
  }
}
