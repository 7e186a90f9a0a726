import type { Context } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import { McpBridge } from './bridge.js'
import { Config, type McpClientOptions } from './config.js'

export const name = 'mcp-client'
export const inject = ['tools']
export { Config }
export type { McpClientConfig, McpClientOptions } from './config.js'
export type { McpResult, ModelSees } from './content.js'
export { renderMcpResult, toContentBlock } from './content.js'
export { registryNames } from './names.js'
export { bridgeSchemas } from './schema.js'
export { McpBridge } from './bridge.js'
export { McpConnection, type McpState } from './connection.js'
export { McpConfigError, McpDisconnectedError, McpProtocolError, McpToolError, McpUnavailableError } from './errors.js'

/** Connects to one MCP server and keeps its tools registered as `mcp__<server>__<tool>`. */
export async function apply(ctx: Context, options: McpClientOptions): Promise<void> {
  // Cordis validated `options` against Config already; parsing again also covers direct calls and types the defaults.
  const config = Config.parse(options)
  const tools: ToolRegistry = ctx.tools
  const bridge = new McpBridge(tools, config, ctx.logger(`mcp-client:${config.name}`))
  ctx.effect(() => () => bridge.close(), `mcp-client(${JSON.stringify(config.name)})`)
  // The first attempt is awaited so the tools exist once loading resolves; a failure only schedules retries.
  await bridge.connection.start()
}
