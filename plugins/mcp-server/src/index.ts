import type { Context } from 'cordis'
import { Config, type McpServerOptions } from './config.js'
import { serve } from './serve.js'

export const name = 'mcp-server'
export const inject = ['tools']
export { Config }
export type { McpServerConfig, McpServerOptions } from './config.js'
export { serve, type ServedEndpoint } from './serve.js'
export { serveHttp, type HttpEndpoint, type HttpOptions } from './http.js'
export { serveStdio, createMcpServer, listMcpTools, callMcpTool, type McpEndpoint, type ServerInfo } from './server.js'
export { mcpOutputSchema, structuredContent } from './schema.js'
export { LineTransport, MAX_FRAME_BYTES, type LineTransportOptions, type OversizeFrame } from './stdio.js'
export { toMcpContent } from './content.js'
export { McpStdioInUseError } from './errors.js'
export { mcpApproval, mcpInteraction, withCaller, callerOf, type Caller } from './elicit.js'

/** Serves `ctx.tools` over MCP; announces tool list changes; unloading closes the endpoint. */
export async function apply(ctx: Context, options: McpServerOptions = {}): Promise<void> {
  const endpoint = await serve(ctx, options)
  if (endpoint.url) ctx.logger('mcp-server').info(`listening on ${endpoint.url}`)
}
