import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ToolRegistry } from '@cordage/registry'
import { mcpOriginOf } from '@cordage/services'
import { toMcpContent } from './content.js'
import { callerOf, withCaller, type Caller } from './elicit.js'
import { McpStdioInUseError } from './errors.js'
import { mcpOutputSchema, structuredContent } from './schema.js'
import { LineTransport } from './stdio.js'
import { withRequestTrace } from './trace.js'

/** Server identity sent in the MCP initialize answer. */
export interface ServerInfo {
  name: string
  version: string
}

/** A running MCP endpoint: `toolsChanged()` announces a new tool list, `close()` stops it. */
export interface McpEndpoint {
  toolsChanged(): void
  close(): Promise<void>
}

/**
 * The MCP view of every registered tool. A bridged MCP tool (one that declares its `mcpOrigin`) shows its
 * own server's `outputSchema` (none when that server advertised none the bridge enforces), not the
 * bridge's `{ content, structuredContent }` wrapper.
 */
export function listMcpTools(tools: ToolRegistry): Tool[] {
  return tools.list().map((tool) => {
    const listed: Tool = { name: tool.name, description: tool.description, inputSchema: tool.parameters as Tool['inputSchema'] }
    const origin = mcpOriginOf(tools.get(tool.name))
    const outputSchema = origin ? origin.outputSchema : mcpOutputSchema(tool.outputSchema)
    if (outputSchema) listed.outputSchema = outputSchema as Tool['outputSchema']
    if (tool.annotations) listed.annotations = { ...tool.annotations }
    return listed
  })
}

/**
 * Runs one `tools/call` through `tools.execute` (the full pipeline, policy included) and maps the result.
 * With a `caller`, questions and approvals the call raises are elicited from that client.
 */
export async function callMcpTool(
  tools: ToolRegistry,
  name: string,
  args: unknown,
  signal: AbortSignal,
  callId: string,
  caller?: Caller,
): Promise<CallToolResult> {
  const run = () => tools.execute({ name, arguments: args ?? {}, signal, callId })
  const result = await (caller ? withCaller(caller, run) : run())
  const content = toMcpContent(result.content)
  if (result.isError) return { isError: true, content }
  const definition = tools.get(name)
  // A bridged tool's value already is an MCP result: its server's structured result goes out as it came.
  if (mcpOriginOf(definition)) {
    const structured = (result.value as { structuredContent?: CallToolResult['structuredContent'] } | null)?.structuredContent
    return structured === undefined ? { content } : { content, structuredContent: structured }
  }
  // The schema of the tool that produced the value; a tool re-registered mid-call is wrapped by its new schema.
  const schema = definition?.output.schema ?? { type: 'object' }
  return { content, structuredContent: structuredContent(schema, result.value) }
}

/** A low-level MCP `Server` answering tools/list and tools/call from `tools`. */
export function createMcpServer(tools: ToolRegistry, info: ServerInfo): Server {
  const server = new Server(info, { capabilities: { tools: { listChanged: true } } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listMcpTools(tools) }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    // A client's `traceparent` in `_meta` makes the call's spans children of its own.
    withRequestTrace(request.params._meta, () =>
      callMcpTool(
        tools,
        request.params.name,
        request.params.arguments,
        extra.signal,
        `mcp_${String(extra.requestId)}`,
        callerOf(() => server.getClientCapabilities(), extra.sendRequest),
      ),
    ),
  )
  return server
}

/** Coalesces bursts of changes (a plugin registering many tools) into one notification per tick. */
export function coalesce(send: () => void): () => void {
  let pending = false
  return () => {
    if (pending) return
    pending = true
    setImmediate(() => {
      pending = false
      send()
    })
  }
}

// Process-wide (on globalThis, so two copies of this package see one claim): stdio is one per process.
const STDIO_CLAIM = Symbol.for('@cordage/plugin-mcp-server/stdio')
const claims = globalThis as { [STDIO_CLAIM]?: boolean }

/**
 * Serves `tools` over stdio (this process's stdin/stdout); `warn` hears about refused oversized frames.
 * Throws `MCP_STDIO_IN_USE` while another stdio server of this process runs.
 */
export async function serveStdio(tools: ToolRegistry, info: ServerInfo, options: { warn?(message: string): void } = {}): Promise<McpEndpoint> {
  if (claims[STDIO_CLAIM]) throw new McpStdioInUseError()
  claims[STDIO_CLAIM] = true
  let held = true
  const release = () => {
    if (held) claims[STDIO_CLAIM] = held = false
  }
  const server = createMcpServer(tools, info)
  try {
    await server.connect(
      new LineTransport(process.stdin, process.stdout, {
        onOversize: ({ bytes, id }) =>
          options.warn?.(`MCP_FRAME_TOO_LARGE: refused a ${bytes}-byte message (request id ${JSON.stringify(id)}); answered with an InvalidRequest error`),
      }),
    )
  } catch (error) {
    release()
    throw error
  }
  return {
    toolsChanged: coalesce(() => void server.sendToolListChanged().catch(() => {})),
    close: () => server.close().finally(release),
  }
}
