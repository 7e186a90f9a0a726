import type { Context } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import Schema from 'schemastery'
import { ConfigError, strictConfig, type JsonObject, type ToolExec } from '@cordage/core'
import { lspTool } from './lsp.js'
import { ServerPool } from './pool.js'
import type { ServerSpec } from './server.js'
import { Workspace } from './workspace.js'

/** Plugin name. */
export const name = 'lsp'
/** Needs the tool registry. */
export const inject = ['tools']

/** One language server entry of the config (`args` and `env` default to empty). */
export interface ServerConfig {
  name: string
  command: string
  args?: string[]
  globs: string[]
  languageId: string
  env?: Record<string, string>
  initializationOptions?: unknown
}

/** Plugin configuration (see the README's Config table). */
export interface Config {
  root?: string
  allowOutsideRoot: boolean
  servers: ServerConfig[]
  startTimeoutMs: number
  requestTimeoutMs: number
  diagnosticsWaitMs: number
  diagnosticsSettleMs: number
  shutdownGraceMs: number
  maxFileBytes: number
  maxOpenDocuments: number
  maxResults: number
  pageSize: number
}

const Server = Schema.object({
  name: Schema.string().required().description('Name used in messages (e.g. "typescript").'),
  command: Schema.string().required().description('Executable, run without a shell (e.g. "typescript-language-server").'),
  args: Schema.array(Schema.string()).default([]).description('Arguments (e.g. ["--stdio"]).'),
  globs: Schema.array(Schema.string()).required().description('Root-relative file globs the server handles (e.g. ["**/*.ts", "**/*.tsx"]).'),
  languageId: Schema.string().required().description('LSP language id of the documents (e.g. "typescript").'),
  env: Schema.dict(Schema.string()).default({}).description('Extra environment variables.'),
  initializationOptions: Schema.any().description('Sent as initializationOptions.'),
})

/** The config schema, validated at load; every key but `servers` is optional on input. */
export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    root: Schema.string().description('Workspace root (default: the current working directory).'),
    allowOutsideRoot: Schema.boolean().default(false).description('Allow querying files outside the root.'),
    servers: Schema.array(Server).default([]).description('Language servers, first matching glob wins.'),
    startTimeoutMs: Schema.natural().min(1).default(60_000).description('Time a server may take to start and initialise.'),
    requestTimeoutMs: Schema.natural().min(1).default(30_000).description('Time one request may take.'),
    diagnosticsWaitMs: Schema.natural().default(15_000).description('Time to wait for a server to publish diagnostics of a changed file.'),
    diagnosticsSettleMs: Schema.natural()
      .default(1000)
      .description('Quiet time after a publish before diagnostics count as complete (servers publish in stages).'),
    shutdownGraceMs: Schema.natural().default(2000).description('Time a server gets to exit politely on unload before it is killed.'),
    maxFileBytes: Schema.natural().min(1).default(4_000_000).description('Largest file sent to a server.'),
    maxOpenDocuments: Schema.natural().min(1).default(64).description('Documents kept open per server (least recently used are closed).'),
    maxResults: Schema.natural().min(1).default(2000).description('Locations, symbols or diagnostics kept in a value.'),
    pageSize: Schema.natural().min(1).default(100).description('Entries rendered for the model.'),
  }),
)

function specs(config: Config): ServerSpec[] {
  const names = new Set<string>()
  return config.servers.map((server, index) => {
    const fail = (key: string, message: string) => new ConfigError(name, [{ path: `servers[${index}].${key}`, message }])
    if (!server.command.trim()) throw fail('command', 'is empty')
    if (!server.globs.length) throw fail('globs', 'is empty; list the files the server handles, e.g. ["**/*.ts"]')
    if (names.has(server.name)) throw fail('name', `"${server.name}" is used twice`)
    names.add(server.name)
    return { ...server, args: server.args ?? [], env: server.env ?? {} }
  })
}

/** Registers the `lsp` tool; servers start on first use and are shut down when the plugin unloads. */
export function apply(ctx: Context, config: Config): void {
  const workspace = new Workspace(config.root ?? process.cwd(), config.allowOutsideRoot)
  const pool = new ServerPool(specs(config), { ...config, root: workspace.root, rootUri: workspace.uri })
  ctx.effect(() => () => pool.dispose(), 'lsp servers')
  const tools: ToolRegistry = ctx.tools
  // A result in another file is shown only if the caller could ask about that file itself: the guards
  // (path rules among them) judge this call with that path.
  const mayRead = (exec: ToolExec, path: string) =>
    tools.wouldDeny({ name: exec.name, arguments: { ...(exec.arguments as JsonObject), path }, parent: exec.parent, agent: exec.agent })
  tools.register(lspTool(workspace, pool, config, mayRead))
}

/** The plugin as one object (the module itself is also a valid plugin). */
export default { name, inject, Config, apply }
export { LspError, type LspErrorCode } from './errors.js'
