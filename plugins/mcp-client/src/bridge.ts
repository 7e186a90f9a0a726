import { errorMessage } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { McpClientConfig } from './config.js'
import { McpConnection, type McpLogger } from './connection.js'
import { registryNames } from './names.js'
import { bridgeTool } from './tool.js'

interface Registered {
  /** The MCP descriptor as JSON: a changed descriptor is re-registered. */
  key: string
  dispose: () => unknown
}

/** Keeps `ctx.tools` in step with one MCP server's tool list across list changes and reconnects. */
export class McpBridge {
  readonly connection: McpConnection
  private readonly registered = new Map<string, Registered>()
  private readonly warned = new Set<string>()

  constructor(
    private readonly tools: ToolRegistry,
    private readonly config: McpClientConfig,
    private readonly logger: McpLogger,
  ) {
    this.connection = new McpConnection(config, logger, (list) => this.sync(list))
  }

  /** Registry names of the tools currently registered for this server, sorted. */
  names(): string[] {
    return [...this.registered.keys()].sort()
  }

  /** Unregisters every tool and closes the connection. */
  async close(): Promise<void> {
    this.sync([])
    await this.connection.close()
  }

  private sync(list: Tool[]): void {
    const names = registryNames(
      this.config.name,
      list.map((tool) => tool.name),
    )
    const next = new Map<string, { key: string; tool: Tool }>()
    for (const tool of list) next.set(names.get(tool.name)!, { key: JSON.stringify(tool), tool })
    for (const [name, entry] of this.registered) {
      if (next.get(name)?.key === entry.key) continue
      this.registered.delete(name)
      entry.dispose()
    }
    for (const [name, { key, tool }] of next) {
      if (this.registered.has(name)) continue
      try {
        const { definition, warnings } = bridgeTool(name, tool, {
          server: this.config.name,
          modelSees: this.config.modelSees,
          // An own-property lookup: a server tool may be called `constructor` or `__proto__`.
          paths: this.config.paths && Object.hasOwn(this.config.paths, tool.name) ? this.config.paths[tool.name] : undefined,
          call: (original, args, signal) => this.connection.call(original, args, signal),
        })
        const dispose = this.tools.register(definition)
        this.registered.set(name, { key, dispose })
        for (const warning of warnings) {
          if (this.warned.has(warning)) continue
          this.warned.add(warning)
          this.logger.warn(`${this.config.name}: ${warning}`)
        }
      } catch (error) {
        this.logger.warn(`${this.config.name}: tool "${tool.name}" not registered as ${name}: ${errorMessage(error)}`)
      }
    }
  }
}
