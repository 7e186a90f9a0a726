import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { MountHandleSchema } from './inspect-tool.js'
import type { Mounts } from './mounts.js'

const MOUNT_DESCRIPTION = `Mount a temporary plugin into the running agent. \`code\` is the body of an async JavaScript function (plain JS, not TypeScript) that returns a plugin: \`(ctx) => { … }\` or \`{ name, inject: ['service'], apply(ctx, config) { … } }\`.
In apply, ctx offers: ctx.tools.register(defineTool({ name, description, parameters: <JSON Schema>, output: { schema: <JSON Schema>, render: (args, value) => [{ type: 'text', text }] }, execute: async (args) => value })), ctx.tools.list/get/execute (calls go through the full pipeline), ctx.on(event, listener) (waterfall listeners must return next()), ctx.emit, ctx.provide(name, value), ctx.effect, ctx.setTimeout/setInterval, and the services named in inject. A plugin whose inject is not yet available mounts as pending and starts when it appears. Returns a handle; remove it with cordis_unmount.`

/** `cordis_mount` and `cordis_unmount`. */
export function mountTools(mounts: Mounts): ToolDefinition[] {
  const mount = defineTool({
    name: 'cordis_mount',
    description: MOUNT_DESCRIPTION,
    parameters: Schema.object({ code: Schema.string().required().description('The function body that returns the plugin.') }),
    output: {
      schema: MountHandleSchema,
      render: (_args, value) => [
        {
          type: 'text',
          text:
            value.state === 'active'
              ? `Temporary plugin ${value.id} is active (plugin "${value.pluginName}"${value.provides.length ? `; provides ${value.provides.join(', ')}` : ''}; available until cordis_unmount or the runtime stops).`
              : `Temporary plugin ${value.id} is pending (plugin "${value.pluginName}"; waiting for ${value.waitingFor.join(', ')}; it starts when they appear).`,
        },
      ],
    },
    execute: (args) => mounts.mount(args.code),
  })
  const unmount = defineTool({
    name: 'cordis_unmount',
    description:
      'Remove a temporary plugin mounted with cordis_mount, by id (dyn-1, …); returns once its tools, listeners, services and timers are gone. Plugins from the configuration cannot be removed.',
    parameters: Schema.object({ id: Schema.string().required().description('The mount id, e.g. "dyn-1".') }),
    output: {
      schema: Schema.object({ id: Schema.string().required(), pluginName: Schema.string().required() }),
      render: (_args, value) => [{ type: 'text', text: `Temporary plugin ${value.id} ("${value.pluginName}") was unmounted.` }],
    },
    execute: (args) => mounts.unmount(args.id),
  })
  return [mount, unmount]
}
