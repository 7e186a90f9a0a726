import type { Context } from 'cordis'
import { Config, type McpServerConfig, type McpServerOptions } from './config.js'
import { serve } from './serve.js'

/** Plugin name. */
export const name = 'mcp-server'
/** Serves the tools of the registry. */
export const inject = ['tools']
export { Config }
export type { McpServerConfig, McpServerOptions } from './config.js'
export { serve, type ServedEndpoint } from './serve.js'
export { serveHttp, type HttpEndpoint, type HttpOptions } from './http.js'
export { serveStdio, createMcpServer, type McpEndpoint, type ServerInfo } from './server.js'
export { McpStdioInUseError } from './errors.js'

/** Serves `ctx.tools` over MCP; announces tool list changes; unloading closes the endpoint. */
export async function apply(ctx: Context, options: McpServerOptions): Promise<void> {
  // Cordis resolved the options through `Config` before calling apply, so they arrive parsed (defaults
  // applied); the parameter is typed as written, which is what `ctx.plugin(plugin, options)` checks.
  const config = options as McpServerConfig
  const endpoint = await serve(ctx, config)
  if (endpoint.url) ctx.logger('mcp-server').info(`listening on ${endpoint.url}`)
}

/** The plugin as one object (the module itself is also a valid plugin). */
export default { name, inject, Config, apply }
