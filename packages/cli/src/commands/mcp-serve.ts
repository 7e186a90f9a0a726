import type { Context } from 'cordis'
import { CordageError } from '@cordage/core'
import { CliError, EXIT } from '../errors.js'
import type { ConfigWatcher } from '../reload.js'
import type { Command } from './command.js'

/** `cordage mcp serve [--http <port>]`: serve the configured tools over MCP until stopped. */
export const mcpServeCommand: Command = {
  name: 'mcp serve',
  summary: 'serve the configured tools over MCP (stdio, or Streamable HTTP on 127.0.0.1)',
  usage: '[--http <port>] [--host <address>] [--watch]',
  options: {
    http: { type: 'string', description: 'serve Streamable HTTP on this port (0 picks a free one) instead of stdio' },
    host: { type: 'string', description: 'address to bind for --http (default 127.0.0.1)' },
    watch: { type: 'boolean', description: 'reload cordage.yml when it changes (clients get tools/list_changed)' },
  },
  async run({ values, output, cwd, stdin }) {
    const http = values.http as string | undefined
    const port = http === undefined ? undefined : Number(http)
    if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
      throw new CliError(`--http expects a port number from 0 to 65535, got ${JSON.stringify(http)}`)
    }
    const [{ startRuntime }, { serve }, { containStrayErrors }] = await Promise.all([
      import('../runtime.js'),
      import('@cordage/plugin-mcp-server'),
      import('../containment.js'),
    ])
    // In stdio mode stdout is the protocol channel: everything else this process says goes to stderr.
    const runtime = await startRuntime({ cwd, configFile: values.config as string | undefined, verbose: !!values.verbose, output })
    const release = containStrayErrors(output)
    let stop!: () => void
    const stopped = new Promise<void>((resolve) => (stop = resolve))
    // A server asked to stop (by any of these) shuts down cleanly and exits 0.
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
    for (const signal of signals) process.once(signal, stop)
    let watcher: ConfigWatcher | undefined
    try {
      // Watching starts before any client can connect, so no edit a client makes after connecting is missed.
      if (values.watch) watcher = (await import('../reload.js')).watchConfig(runtime, { cwd, configFile: values.config as string | undefined, output })
      let url: string | undefined
      await runtime.ctx.plugin({
        name: 'mcp-serve',
        inject: ['tools'],
        async apply(ctx: Context) {
          try {
            const endpoint = await serve(
              ctx,
              port === undefined ? { transport: 'stdio' } : { transport: 'http', port, ...(values.host !== undefined && { host: values.host as string }) },
            )
            url = endpoint.url
          } catch (error) {
            // mcp-server listed in cordage.yml already answers on stdio: a second server would answer everything twice.
            if (!(CordageError.is(error) && error.code === 'MCP_STDIO_IN_USE')) throw error
            output.error(
              output.style('yellow', 'cordage mcp serve: cordage.yml already serves MCP on stdio (plugin mcp-server); serving through that one server only'),
            )
          }
        },
      })
      const count = runtime.ctx.get('tools')!.list().length
      if (url) output.error(`cordage mcp serve: ${count} tool${count === 1 ? '' : 's'} at ${url}`)
      else {
        output.error(`cordage mcp serve: ${count} tool${count === 1 ? '' : 's'} on stdio`)
        // The client closing our stdin ends the session.
        stdin.once('end', stop)
        stdin.once('close', stop)
      }
      await stopped
      return EXIT.ok
    } finally {
      // A reload already under way finishes before everything is unloaded.
      watcher?.close()
      await watcher?.idle()
      for (const signal of signals) process.off(signal, stop)
      await runtime.dispose()
      release()
    }
  },
}
