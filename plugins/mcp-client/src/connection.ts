import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolResultSchema,
  ErrorCode,
  ListToolsResultSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { ToolTimeoutError, type JsonValue, errorMessage } from '@cordage/core'
import { ProcessTree } from '@cordage/process'
import { AbortWatch } from '@cordage/registry'
import type { McpClientConfig } from './config.js'
import type { McpResult } from './content.js'
import { RequestSignal } from './cancel.js'
import { limitedFetch, MAX_MESSAGE_BYTES } from './limit.js'
import { traceMeta } from './trace.js'
import { McpDisconnectedError, McpProtocolError, McpToolError, McpUnavailableError } from './errors.js'

/** The logging surface the connection needs (a Cordis logger fits). */
export interface McpLogger {
  info(...args: unknown[]): void
  warn(...args: unknown[]): void
  debug(...args: unknown[]): void
}

/** Connection state: `down` means a reconnect is scheduled. */
export type McpState = 'connecting' | 'up' | 'down' | 'closed'

const CLIENT_INFO = { name: 'cordage-mcp-client', version: '0.1.0' }

/** How long a server may take to answer the ping sent after an HTTP transport error before it counts as gone. */
const PROBE_TIMEOUT_MS = 3_000
/** After a stdio server's client closed: time its leftover processes get between SIGTERM and SIGKILL. */
const TREE_GRACE_MS = 1_000
/** The least time between two tools/list passes that `list_changed` asked for. */
const REFRESH_SPACING_MS = 250

/**
 * One MCP server connection: connect, list tools, reconnect with backoff after a drop, and send calls.
 * Tool registration is delegated to `onTools` (called with the full list, or `[]` when the server goes down).
 */
export class McpConnection {
  state: McpState = 'connecting'
  private client?: Client
  private transport?: Transport
  private generation = 0
  private attempt = 0
  private timer?: NodeJS.Timeout
  private refreshing?: Promise<void>
  /** When the last tools/list pass started (see `refresh`). */
  private lastRefresh = 0
  private stale = false
  private probing?: Client
  /** Callers' signals this connection follows: one listener on each, taken off when it closes. */
  private readonly callers = new AbortWatch()
  /** A stdio server's process tree, per transport: what the server started goes when its client closes. */
  private readonly trees = new WeakMap<Transport, ProcessTree>()

  constructor(
    private readonly config: McpClientConfig,
    private readonly logger: McpLogger,
    private readonly onTools: (tools: Tool[]) => void,
  ) {}

  /** The SDK `Client` while connected (for callers that need MCP features the bridge does not cover). */
  get sdkClient(): Client | undefined {
    return this.client
  }

  /** The child process id of a stdio server while connected. */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined
  }

  /** Connects once; on failure logs and schedules reconnection (never throws). */
  async start(): Promise<void> {
    if (this.state === 'closed') return
    clearTimeout(this.timer)
    this.timer = undefined
    const generation = ++this.generation
    this.state = 'connecting'
    let transport: Transport
    try {
      transport = await this.createTransport(generation)
    } catch (error) {
      this.logger.warn(`${this.config.name}: cannot create the transport: ${errorMessage(error)}`)
      return this.dropped(generation, 'transport creation failed')
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} })
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (generation === this.generation) void this.refresh()
    })
    // The SDK's Protocol exposes callback properties, not EventTarget listeners.
    // oxlint-disable-next-line unicorn/prefer-add-event-listener
    client.onclose = () => this.dropped(generation, 'the connection closed')
    // oxlint-disable-next-line unicorn/prefer-add-event-listener
    client.onerror = (error) => {
      this.logger.debug(`${this.config.name}: transport error: ${error.message}`)
      // Over HTTP a dead server only shows as a broken response stream: the SDK neither closes nor fails
      // the calls waiting on it, which would hang until timeoutMs. A ping tells a dead server from a blip.
      if (this.config.transport === 'http' && generation === this.generation && this.state === 'up') void this.probe(generation, client)
    }
    try {
      await client.connect(transport, { timeout: this.config.connectTimeoutMs })
      const pid = transport instanceof StdioClientTransport ? transport.pid : null
      if (pid) this.trees.get(transport)?.adopt(pid)
      if (this.superseded(generation)) {
        await this.shut(client, transport)
        return
      }
      this.client = client
      this.transport = transport
      this.state = 'up'
      this.attempt = 0
      this.logger.info(`${this.config.name}: connected${this.pid ? ` (pid ${this.pid})` : ''}`)
      await this.refresh()
    } catch (error) {
      await this.shut(client, transport)
      if (this.superseded(generation)) return
      this.logger.warn(`${this.config.name}: cannot connect: ${errorMessage(error)}`)
      this.dropped(generation, 'connection failed')
    }
  }

  /**
   * Re-lists tools and hands the list to `onTools`; concurrent requests coalesce into one more pass, which
   * starts no sooner than `REFRESH_SPACING_MS` after the one before (a server flooding `list_changed` would
   * otherwise have its whole list fetched and compiled back to back).
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.stale = true
      return this.refreshing
    }
    this.refreshing = (async () => {
      do {
        const wait = this.lastRefresh + REFRESH_SPACING_MS - Date.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref())
        if (this.state !== 'up') break
        this.lastRefresh = Date.now()
        this.stale = false
        const generation = this.generation
        try {
          const tools = await this.listTools()
          if (generation === this.generation && this.state === 'up') this.onTools(tools)
        } catch (error) {
          if (generation === this.generation && this.state === 'up') this.logger.warn(`${this.config.name}: tools/list failed: ${errorMessage(error)}`)
        }
      } while (this.stale && this.state === 'up')
    })().finally(() => {
      this.refreshing = undefined
    })
    return this.refreshing
  }

  /** Sends `tools/call`; `signal` aborts the request (the SDK sends notifications/cancelled). */
  async call(tool: string, args: JsonValue, signal: AbortSignal): Promise<McpResult> {
    const client = this.client
    if (this.state !== 'up' || !client) throw new McpUnavailableError(this.config.name, this.state)
    const generation = this.generation
    if (signal.aborted) throw signal.reason
    // A per-call signal: the SDK never removes its abort listener, so a long-lived caller signal must not
    // reach it. The caller's signal is followed through this connection's one listener on it.
    const cancel = new RequestSignal()
    const wait = this.callers.add(signal, () => cancel.abort(signal.reason))
    let result
    try {
      // `request`, not `callTool`: output validation is ours (supported subset, precise violations).
      // At `timeout` the SDK sends notifications/cancelled and rejects with RequestTimeout.
      const params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> } = {
        name: tool,
        arguments: args as Record<string, unknown>,
      }
      const trace = traceMeta()
      if (trace) params._meta = trace
      result = await client.request({ method: 'tools/call', params }, CallToolResultSchema, {
        signal: cancel as unknown as AbortSignal,
        timeout: this.config.timeoutMs,
      })
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error
      if (error instanceof McpError) {
        if (error.code === ErrorCode.ConnectionClosed) throw new McpDisconnectedError(this.config.name)
        if (error.code === ErrorCode.RequestTimeout) throw new ToolTimeoutError(this.config.timeoutMs)
        throw new McpProtocolError(`the MCP server "${this.config.name}" rejected the call: ${error.message}`, error.code)
      }
      // The answer arrived but is not a CallToolResult: this call failed, the connection is fine.
      if (error instanceof z.core.$ZodError) throw new McpProtocolError(`the MCP server "${this.config.name}" sent an invalid result: ${issues(error)}`)
      // The connection was dropped while the call was out (an oversized message): the call was sent.
      if (this.state !== 'up' || generation !== this.generation) throw new McpDisconnectedError(this.config.name)
      // A transport failure (HTTP server gone, broken pipe): treat the connection as dropped.
      this.dropped(generation, errorMessage(error))
      throw new McpUnavailableError(this.config.name, errorMessage(error))
    } finally {
      wait.cancel()
    }
    if (result.isError) {
      // A leading "Error: " (how Cordage and many servers render failures) is not repeated in our own rendering.
      const text = result.content
        .filter((item) => item.type === 'text')
        .map((item) => item.text)
        .join('\n')
        .replace(/^Error: /, '')
      throw new McpToolError(text || `the MCP tool "${tool}" reported an error without text`)
    }
    const value: McpResult = { content: result.content as JsonValue[] }
    if (result.structuredContent !== undefined) value.structuredContent = result.structuredContent as McpResult['structuredContent']
    return value
  }

  /** Closes the connection for good: cancels reconnection, closes the transport and ends a stdio child. */
  async close(): Promise<void> {
    this.state = 'closed'
    this.generation++
    clearTimeout(this.timer)
    this.callers.close()
    const { client, transport } = this
    this.client = undefined
    this.transport = undefined
    if (transport && 'terminateSession' in transport) await (transport as { terminateSession(): Promise<void> }).terminateSession().catch(() => {})
    await this.shut(client, transport, (error) => this.logger.warn(`${this.config.name}: close failed: ${errorMessage(error)}`))
  }

  /**
   * Closes a client (the SDK ends a stdio child: stdin closed, then SIGTERM, then SIGKILL), then ends whatever
   * else the server started: its descendants and every process that inherited its tree marker (`setsid`
   * daemons, grandchildren of a `npx` wrapper).
   */
  private async shut(client: Client | undefined, transport: Transport | undefined, onError: (error: unknown) => void = () => {}): Promise<void> {
    await client?.close().catch(onError)
    const tree = transport && this.trees.get(transport)
    if (tree) await tree.terminate({ graceMs: TREE_GRACE_MS })
  }

  /** Pings the server after a transport error; no answer within PROBE_TIMEOUT_MS drops the connection (failing calls in flight). */
  private async probe(generation: number, client: Client): Promise<void> {
    if (this.probing === client) return
    this.probing = client
    try {
      await client.ping({ timeout: PROBE_TIMEOUT_MS })
    } catch (error) {
      if (!this.superseded(generation)) this.dropped(generation, `the server stopped answering: ${errorMessage(error)}`)
    } finally {
      if (this.probing === client) this.probing = undefined
    }
  }

  /** True when a newer attempt or `close()` replaced the attempt `generation` (state is re-read after awaits). */
  private superseded(generation: number): boolean {
    return generation !== this.generation || (this.state as McpState) === 'closed'
  }

  private async listTools(): Promise<Tool[]> {
    const client = this.client
    if (!client) return []
    const tools: Tool[] = []
    let cursor: string | undefined
    do {
      const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsResultSchema, {
        timeout: this.config.connectTimeoutMs,
      })
      tools.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor)
    return tools
  }

  private async createTransport(generation: number): Promise<Transport> {
    const config = this.config
    if (config.transport === 'stdio') {
      const tree = new ProcessTree()
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: tree.environment(config.env ?? {}),
        cwd: config.cwd,
        stderr: 'inherit',
      })
      this.trees.set(transport, tree)
      return transport
    }
    // Loaded on demand: stdio-only use does not pull in the HTTP/SSE client stack.
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    // A message past the limit ends the connection, as the SDK's stdio transport does with a long line.
    const fetch = limitedFetch((bytes) => {
      this.logger.warn(`${config.name}: MCP_FRAME_TOO_LARGE: the server sent a message over ${MAX_MESSAGE_BYTES} bytes (${bytes} so far); reconnecting`)
      this.dropped(generation, 'a message over the size limit')
    })
    return new StreamableHTTPClientTransport(new URL(config.url), { fetch, ...(config.headers && { requestInit: { headers: config.headers } }) })
  }

  /** The current connection is gone: unregister its tools and schedule a reconnect with backoff. */
  private dropped(generation: number, reason: string): void {
    if (generation !== this.generation || this.state === 'closed' || this.state === 'down') return
    const wasUp = this.state === 'up'
    this.state = 'down'
    const { client, transport } = this
    this.client = undefined
    this.transport = undefined
    if (client) void this.shut(client, transport)
    if (wasUp) {
      this.logger.warn(`${this.config.name}: disconnected (${reason}); its tools are unregistered until it is back`)
      this.onTools([])
    }
    const { initialDelayMs, maxDelayMs } = this.config.reconnect
    const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(this.attempt++, 30))
    this.timer = setTimeout(() => void this.start(), delay)
  }
}

/** The first few problems of an invalid result, each as `<pointer>: <message>`. */
function issues(error: z.core.$ZodError): string {
  const listed = error.issues.slice(0, 5).map((issue) => `/${issue.path.join('/')}: ${issue.message}`)
  return listed.join('; ') + (error.issues.length > 5 ? `; and ${error.issues.length - 5} more` : '')
}
