import type { Context } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import { McpBridge } from './bridge.js'
import { Config, type McpClientConfig, type McpClientOptions } from './config.js'

/** Plugin name. */
export const name = 'mcp-client'
/** Registers the server's tools in the registry. */
export const inject = ['tools']
export { Config }
export type { McpClientConfig, McpClientOptions } from './config.js'
export type { McpResult, ModelSees } from './content.js'
export type { McpState } from './connection.js'
export { McpConfigError, McpDisconnectedError, McpProtocolError, McpToolError, McpUnavailableError } from './errors.js'

/** Connects to one MCP server and keeps its tools registered as `mcp__<server>__<tool>`. */
export async function apply(ctx: Context, options: McpClientOptions): Promise<void> {
  // Cordis resolved the options through `Config` before calling apply, so they arrive parsed (defaults
  // applied); the parameter is typed as written, which is what `ctx.plugin(plugin, options)` checks.
  const config = options as McpClientConfig
  const tools: ToolRegistry = ctx.tools
  const bridge = new McpBridge(tools, config, ctx.logger(`mcp-client:${config.name}`))
  ctx.effect(() => () => bridge.close(), `mcp-client(${JSON.stringify(config.name)})`)
  // The first attempt is awaited so the tools exist once loading resolves; a failure only schedules retries.
  await bridge.connection.start()
}

/** The plugin as one object (the module itself is also a valid plugin). */
export default { name, inject, Config, apply }
