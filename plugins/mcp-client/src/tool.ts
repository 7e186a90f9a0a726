import { ToolArgsError, compileValidator, formatViolations, type JsonValue, type ToolDefinition, type ToolPathArgument } from '@cordage/core'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
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
  definition: ToolDefinition<JsonValue, McpResult>
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
  const definition: ToolDefinition<JsonValue, McpResult> = {
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
    // Read-only tools may run alongside others; anything else keeps the registry's exclusive default.
    concurrency: tool.annotations?.readOnlyHint === true ? 'parallel' : 'exclusive',
  }
  if (options.paths?.length) definition.paths = options.paths
  return { definition, warnings }
}
