import { EXIT } from '../errors.js'
import { oneLine } from '../output.js'
import type { Command } from './command.js'

/** `cordage tools [--json]`: the tools the configured plugins register. */
export const toolsCommand: Command = {
  name: 'tools',
  summary: 'list the tools the configured plugins register',
  usage: '[--json]',
  options: { json: { type: 'boolean', description: 'print the full schemas as JSON' } },
  async run({ values, output, cwd }) {
    const { startRuntime } = await import('../runtime.js')
    const runtime = await startRuntime({ cwd, configFile: values.config as string | undefined, verbose: !!values.verbose, output })
    try {
      const tools = runtime.ctx.get('tools')!.list()
      if (values.json) {
        output.line(JSON.stringify(tools, null, 2))
        return EXIT.ok
      }
      const width = Math.max(0, ...tools.map((tool) => tool.name.length))
      for (const tool of tools) output.line(`${output.style('bold', tool.name.padEnd(width))}  ${oneLine(tool.description, 100)}`)
      output.error(output.style('dim', `${tools.length} tool${tools.length === 1 ? '' : 's'} from ${runtime.plugins.join(', ') || 'no plugins'}`))
      return EXIT.ok
    } finally {
      await runtime.dispose()
    }
  },
}
