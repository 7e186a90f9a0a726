import { strictConfig, type JsonSchemaNode } from '@cordage/core'
import { z } from 'zod'

const common = {
  /** Server name: the `<server>` in `mcp__<server>__<tool>`. */
  name: z.string().min(1).describe('Server name, used in tool names mcp__<name>__<tool>.'),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe('Per-call timeout: at the deadline the SDK request is cancelled (notifications/cancelled) and the call fails with TOOL_TIMEOUT.'),
  connectTimeoutMs: z.number().int().positive().default(30_000).describe('Timeout of the initialize handshake and of tools/list.'),
  modelSees: z
    .enum(['content', 'structured', 'both'])
    .default('content')
    .describe('What the model sees: MCP content, structuredContent as JSON text, or both de-duplicated.'),
  reconnect: z
    .object({
      initialDelayMs: z.number().int().positive().default(500),
      maxDelayMs: z.number().int().positive().default(30_000),
    })
    .prefault({})
    .describe('Backoff between reconnection attempts (doubling from initialDelayMs up to maxDelayMs).'),
  paths: z
    .record(
      z.string(),
      z.array(
        z.strictObject({
          pointer: z.string().regex(/^(\/.*)?$/, 'a JSON pointer ("" or starting with "/")'),
          access: z.enum(['read', 'write']),
          default: z.string().optional(),
        }),
      ),
    )
    .optional()
    .describe(
      'Server tool name → its arguments that are filesystem paths, for path-aware policy (e.g. { read_file: [{ pointer: "/path", access: "read" }] }).',
    ),
}

const stdio = z.object({
  ...common,
  transport: z.literal('stdio'),
  command: z.string().min(1).describe('Executable that runs the server (stdio transport).'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).optional().describe('Extra environment (merged over the SDK default safe environment).'),
  cwd: z.string().optional(),
})

const http = z.object({
  ...common,
  transport: z.literal('http'),
  url: z.url().describe('Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp.'),
  headers: z.record(z.string(), z.string()).optional(),
})

const schema = z.discriminatedUnion('transport', [stdio, http])

/** The plugin config: one MCP server per plugin instance (a Standard Schema, validated by Cordis at load; unknown keys fail). */
export const Config = strictConfig('mcp-client', schema, z.toJSONSchema(schema, { io: 'input' }) as JsonSchemaNode)

/** A validated config (defaults applied). */
export type McpClientConfig = z.output<typeof Config>
/** A config as written (defaults optional). */
export type McpClientOptions = z.input<typeof Config>
