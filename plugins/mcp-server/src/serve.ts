import type { Context } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import { Config, type McpServerOptions } from './config.js'
import { mcpApproval, mcpInteraction } from './elicit.js'
import { serveHttp } from './http.js'
import { serveStdio, type McpEndpoint } from './server.js'

/** A served endpoint: `url` and `port` are set for HTTP. */
export interface ServedEndpoint extends McpEndpoint {
  transport: 'stdio' | 'http'
  url?: string
  port?: number
}

/**
 * Serves `ctx.tools` as an effect of `ctx`'s fiber: announces `tools/changed` to clients and closes the
 * endpoint when the fiber unloads. Provides `interaction` and `approval` through elicitation. For hosts (such as a CLI command) that need the endpoint's URL.
 */
export async function serve(ctx: Context, options: McpServerOptions = {}): Promise<ServedEndpoint> {
  const config = Config.parse(options)
  const tools: ToolRegistry = ctx.tools
  const info = { name: config.serverName, version: config.serverVersion }
  const endpoint: ServedEndpoint =
    config.transport === 'http'
      ? { transport: 'http', ...(await serveHttp(tools, info, config)) }
      : { transport: 'stdio', ...(await serveStdio(tools, info, { warn: (message) => ctx.logger('mcp-server').warn(message) })) }
  ctx.effect(() => () => endpoint.close(), 'mcp-server endpoint')
  // The human behind an MCP server is its client: questions and approvals go to the calling client.
  // A service someone else provides (a CLI prompt) is left alone.
  if (config.elicitation) {
    if (!ctx.get('interaction')) ctx.provide('interaction', mcpInteraction)
    if (!ctx.get('approval')) ctx.provide('approval', mcpApproval)
  }
  ctx.on('tools/changed', () => endpoint.toolsChanged())
  return endpoint
}
