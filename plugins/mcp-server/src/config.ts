import { strictConfig, type JsonSchemaNode } from '@cordage/core'
import { z } from 'zod'

const schema = z
  .object({
    transport: z.enum(['stdio', 'http']).default('stdio').describe("stdio (this process's stdin/stdout) or Streamable HTTP."),
    host: z.string().min(1).default('127.0.0.1').describe('HTTP bind address (loopback by default).'),
    port: z.number().int().min(0).max(65_535).default(0).describe('HTTP port; 0 picks a free one (logged).'),
    path: z.string().startsWith('/').default('/mcp').describe('HTTP endpoint path.'),
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * 1024)
      .describe('Largest HTTP request body accepted.'),
    maxSessions: z.number().int().positive().default(100).describe('HTTP sessions open at once; an initialize past it gets 503 MCP_SESSION_LIMIT.'),
    sessionIdleMs: z
      .number()
      .int()
      .positive()
      .default(30 * 60_000)
      .describe('An HTTP session with no request open this long is closed (its client gets 404 and may initialize again).'),
    allowedHosts: z
      .array(z.string().min(1))
      .default([])
      .describe('More Host header values the HTTP endpoint accepts (loopback names always, on a loopback bind).'),
    allowedOrigins: z
      .array(z.string().regex(/^[a-z][\w+.-]*:\/\/[^/\s?#]+$/i, 'an origin is scheme://host[:port] with no path, e.g. http://localhost:3000'))
      .default([])
      .describe('Origins (scheme://host[:port]) whose browser pages may call the HTTP endpoint; a request with any other Origin gets 403.'),
    serverName: z.string().min(1).default('cordage').describe('Server name announced to clients.'),
    serverVersion: z.string().min(1).default('0.1.0'),
    elicitation: z
      .boolean()
      .default(true)
      .describe('Provide ctx.interaction and ctx.approval through MCP elicitation on the calling client (unless already provided).'),
  })
  // A plugin listed without config (`- mcp-server` in cordage.yml) gets every default.
  .prefault({})

/** The plugin config (a Standard Schema, validated by Cordis at load; unknown keys fail). */
export const Config = strictConfig('mcp-server', schema, z.toJSONSchema(schema, { io: 'input' }) as JsonSchemaNode)

/** A validated config (defaults applied). */
export type McpServerConfig = z.output<typeof Config>
/** A config as written (every field optional). */
export type McpServerOptions = z.input<typeof Config>
