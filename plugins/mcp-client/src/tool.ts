import {
  TOOL_ANNOTATION_KEYS,
  ToolArgsError,
  compileValidator,
  formatViolations,
  type JsonSchemaNode,
  type JsonValue,
  type ToolAnnotations,
  type ToolDefinition,
  type ToolPathArgument,
} from '@cordage/core'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { McpBridgedDefinition, McpOrigin } from '@cordage/services'
import { renderMcpResult, type McpResult, type ModelSees } from './content.js'
import { bridgeSchemas } from './schema.js'

/** How much of an unusable inputSchema is quoted in the description for the model. */
const MAX_SCHEMA_IN_DESCRIPTION = 4_000

/** What a bridged tool needs from its plugin instance. */
export interface BridgeOptions {
  server: string
  modelSees: ModelSees
  /** The tool's arguments that are filesystem paths (from config `paths`), for path-aware policy. */
  paths?: readonly ToolPathArgument[]
  call(tool: string, args: JsonValue, signal: AbortSignal): Promise<McpResult>
}

/** A registry definition for one MCP tool, plus the schema fallbacks worth logging. */
export interface BridgedTool {
  definition: ToolDefinition<JsonValue, McpResult> & Pick<McpBridgedDefinition, 'mcpOrigin'>
  warnings: string[]
}

/** Builds the registry definition of MCP tool `tool` under the registry name `name`. */
export function bridgeTool(name: string, tool: Tool, options: BridgeOptions): BridgedTool {
  const schemas = bridgeSchemas(tool.inputSchema, tool.outputSchema)
  const warnings: string[] = []
  let description = tool.description || tool.title || `The "${tool.name}" tool of the MCP server "${options.server}".`
  if (schemas.parametersFallback) {
    warnings.push(
      `tool "${tool.name}": inputSchema not enforced locally (${schemas.parametersFallback}); any object is accepted and the server checks the arguments`,
    )
    let quoted = JSON.stringify(tool.inputSchema)
    if (quoted.length > MAX_SCHEMA_IN_DESCRIPTION) quoted = `${quoted.slice(0, MAX_SCHEMA_IN_DESCRIPTION)}…`
    description += `\n\nArguments (JSON Schema, checked by the server): ${quoted}`
  }
  if (schemas.outputFallback) {
    warnings.push(`tool "${tool.name}": outputSchema not enforced (${schemas.outputFallback}); structuredContent is accepted as any JSON object`)
  }
  const validate = compileValidator(schemas.parameters)
  const { modelSees, call } = options
  const definition: ToolDefinition<JsonValue, McpResult> & Pick<McpBridgedDefinition, 'mcpOrigin'> = {
    name,
    description,
    parameters: schemas.parameters,
    output: {
      schema: schemas.output,
      render: (_args, value) => renderMcpResult(value, modelSees),
    },
    execute(args, exec) {
      const violations = validate(args)
      if (violations.length) throw new ToolArgsError(`invalid arguments for ${name}:\n${formatViolations(violations)}`, [...violations])
      return call(tool.name, args, exec.signal)
    },
    annotations: bridgedAnnotations(tool.annotations),
    // Read-only tools may run alongside others; anything else keeps the registry's exclusive default.
    concurrency: tool.annotations?.readOnlyHint === true ? 'parallel' : 'exclusive',
  }
  if (options.paths?.length) definition.paths = options.paths
  // A server re-serving this tool passes the original structured result through, not our wrapper.
  const origin: McpOrigin = { server: options.server, tool: tool.name }
  if (tool.outputSchema !== undefined && schemas.outputFallback === undefined) origin.outputSchema = tool.outputSchema as JsonSchemaNode
  definition.mcpOrigin = origin
  return { definition, warnings }
}

/** What MCP says a tool without a hint is: it may write, destroy, repeat effects and reach the open world. */
const MCP_DEFAULT_HINTS: Required<ToolAnnotations> = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }

/**
 * The server's hints over MCP's defaults, so a tool the server does not annotate reads as what MCP says it
 * is (not read-only) rather than as a tool that declared nothing. A hint that is not a boolean keeps the
 * default: a malformed annotation from a server never makes a tool look safer, nor fails its registration.
 */
export function bridgedAnnotations(annotations: unknown): ToolAnnotations {
  const hints: ToolAnnotations = { ...MCP_DEFAULT_HINTS }
  if (typeof annotations !== 'object' || annotations === null) return hints
  for (const key of TOOL_ANNOTATION_KEYS) {
    const value = (annotations as Record<string, unknown>)[key]
    if (typeof value === 'boolean') hints[key] = value
  }
  return hints
}
