import type { Context } from 'cordis'
import { z } from 'zod'
import type { ToolRegistry } from '@cordage/registry'
import { serveHttp } from './http.js'
import { serveStdio, type McpEndpoint } from './server.js'

export const name = 'mcp-server'
export const inject = ['tools']

/** The plugin config (a Standard Schema, validated by Cordis at load). */
export const Config = z.object({
  transport: z.enum(['stdio', 'http']).default('stdio').describe('stdio (this process\'s stdin/stdout) or Streamable HTTP.'),
  host: z.string().min(1).default('127.0.0.1').describe('HTTP bind address (loopback by default).'),
  port: z.number().int().min(0).max(65_535).default(0).describe('HTTP port; 0 picks a free one (logged).'),
  path: z.string().startsWith('/').default('/mcp').describe('HTTP endpoint path.'),
  maxBodyBytes: z.number().int().positive().default(4 * 1024 * 1024).describe('Largest HTTP request body accepted.'),
  serverName: z.string().min(1).default('cordage').describe('Server name announced to clients.'),
  serverVersion: z.string().min(1).default('0.1.0'),
})
export type McpServerConfig = z.output<typeof Config>
export type McpServerOptions = z.input<typeof Config>

export { serveHttp, type HttpEndpoint, type HttpOptions } from './http.js'
export { serveStdio, createMcpServer, listMcpTools, callMcpTool, type McpEndpoint, type ServerInfo } from './server.js'
export { mcpOutputSchema, structuredContent } from './schema.js'
export { toMcpContent } from './content.js'

/** Serves `ctx.tools` over MCP; announces tool list changes; unloading closes the endpoint. */
export async function apply(ctx: Context, options: McpServerOptions = {}): Promise<void> {
  // Cordis validated `options` against Config already; parsing again also covers direct calls and types the defaults.
  const config = Config.parse(options)
  const logger = ctx.logger('mcp-server')
  const tools: ToolRegistry = ctx.tools
  const info = { name: config.serverName, version: config.serverVersion }
  let endpoint: McpEndpoint
  if (config.transport === 'http') {
    const http = await serveHttp(tools, info, config)
    logger.info(`listening on ${http.url}`)
    endpoint = http
  } else {
    endpoint = await serveStdio(tools, info)
  }
  ctx.effect(() => () => endpoint.close(), 'mcp-server endpoint')
  ctx.on('tools/changed', () => endpoint.toolsChanged())
}
