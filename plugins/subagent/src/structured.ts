import {
  ToolArgsError,
  checkSupportedSchema,
  compileValidator,
  deepFreeze,
  formatViolations,
  toJsonValue,
  type JsonSchemaNode,
  type JsonValue,
  type ToolDefinition,
  type Validator,
  errorMessage,
} from '@cordage/core'
import type { ToolSchema } from '@cordage/registry'
import { SubagentError } from './errors.js'

/** The child-scoped tool a run with an `outputSchema` ends by calling. */
export const STRUCTURED_OUTPUT = 'structured_output'

const DESCRIPTION =
  "Report your final structured result. Call this exactly once, when your answer is complete; the arguments must match this tool's parameter schema exactly. Only this call counts as your result."

/** A run's requested schema and, once reported, its validated value. */
export interface StructuredState {
  schema: JsonSchemaNode
  validate: Validator
  value?: JsonValue
}

/**
 * Checks a caller's `outputSchema` before any child exists: lossless JSON, object-rooted (it becomes the
 * tool's parameters, which providers require to be objects), and inside the supported subset.
 */
export function prepareOutputSchema(raw: unknown): StructuredState {
  let schema: JsonValue
  try {
    schema = toJsonValue(raw)
  } catch (error) {
    throw new ToolArgsError(`outputSchema is not plain JSON: ${errorMessage(error)}`)
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || schema.type !== 'object') {
    throw new ToolArgsError(
      'outputSchema must be an object-rooted JSON Schema ({ "type": "object", "properties": { … } }); wrap a list or a scalar in a property',
    )
  }
  const violations = checkSupportedSchema(schema)
  if (violations.length) throw new ToolArgsError(`outputSchema is outside the supported JSON Schema subset:\n${formatViolations(violations)}`, [...violations])
  const frozen = deepFreeze(schema) as JsonSchemaNode
  return { schema: frozen, validate: compileValidator(frozen) }
}

/** What the child's model is offered: the registered tool with the run's schema as its parameters. */
export function structuredOutputSchema(registered: ToolDefinition | undefined, schema: JsonSchemaNode): ToolSchema {
  return { name: STRUCTURED_OUTPUT, description: registered?.description ?? DESCRIPTION, parameters: schema, outputSchema: registered?.output.schema ?? {} }
}

/**
 * The hidden `structured_output` tool: registered once, offered only to runs with a schema (through their
 * tool view). Its registered parameters are any object; the body validates against the calling run's
 * schema, so every run checks its own.
 */
export function structuredOutputTool(lookup: (agent: string | undefined) => StructuredState | undefined): ToolDefinition {
  return {
    name: STRUCTURED_OUTPUT,
    description: DESCRIPTION,
    hidden: true,
    parameters: { type: 'object' },
    output: {
      schema: { type: 'object', properties: { recorded: { const: true } }, required: ['recorded'], additionalProperties: false },
      render: () => [{ type: 'text', text: 'Structured output recorded.' }],
    },
    execute(args: JsonValue, exec) {
      const state = lookup(exec.agent)
      if (!state) throw new SubagentError('STRUCTURED_OUTPUT_UNAVAILABLE', `${STRUCTURED_OUTPUT} is only offered to a subagent started with an outputSchema`)
      if (state.value !== undefined)
        throw new SubagentError('STRUCTURED_OUTPUT_RECORDED', 'structured output already recorded: the run is complete, so this call is not executed')
      const violations = state.validate(args)
      if (violations.length) throw new ToolArgsError(`the result does not match the requested schema:\n${formatViolations(violations)}`, [...violations])
      state.value = args
      return { recorded: true }
    },
  }
}
