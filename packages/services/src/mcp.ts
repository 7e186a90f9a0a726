import type { JsonSchemaNode, ToolDefinition } from '@cordage/core'

/**
 * Where a bridged MCP tool comes from. A bridge (`@cordage/plugin-mcp-client`) sets it as
 * `definition.mcpOrigin` on the tools it registers, whose value is `{ content, structuredContent? }`:
 * a server re-serving them (`@cordage/plugin-mcp-server`) then passes the original server's
 * `structuredContent` and `outputSchema` through instead of wrapping the bridge's value once more.
 */
export interface McpOrigin {
  /** The bridged server's name (the bridge's config `name`). */
  server: string
  /** The tool's name on that server. */
  tool: string
  /** The server's `outputSchema`, when the bridge enforces it on `structuredContent`. */
  outputSchema?: JsonSchemaNode
}

/** A tool definition that may say it bridges an MCP server's tool. */
export type McpBridgedDefinition = ToolDefinition & { mcpOrigin?: McpOrigin }

/** The MCP origin a definition declares, if any. */
export function mcpOriginOf(definition: ToolDefinition | undefined): McpOrigin | undefined {
  return (definition as McpBridgedDefinition | undefined)?.mcpOrigin
}
