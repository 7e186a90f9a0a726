import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { MountHandleSchema } from './inspect-tool.js'
import type { Mounts } from './mounts.js'

const MOUNT_DESCRIPTION = `Mount a temporary plugin into the running agent, from \`code\` or from an installed \`package\` the configuration allows (\`config\` is passed to it).
\`code\` is the body of an async JavaScript function (plain JS, not TypeScript) that returns a plugin: \`(ctx) => { … }\` or \`{ name, inject: ['service'], apply(ctx, config) { … } }\`. It runs in a sandbox: no process, require, timers or network; values cross as JSON.
In apply, ctx offers: ctx.tools.register(defineTool({ name, description, parameters: <JSON Schema>, output: { schema: <JSON Schema>, render: (args, value) => [{ type: 'text', text }], presentationMeta? }, execute: async (args, exec) => value })), await ctx.tools.list() / get(name) / execute({ name, arguments }) (calls go through the full pipeline, policy included), ctx.on(event, listener) (tools/pre-execute and tools/post-execute listeners get (exec, [result,] next) and return a decision or next(); they can only make decisions stricter; other events give JSON copies), ctx.emit(name, ...args) (your own event names), ctx.provide(name, object) (its methods become async for others), ctx.effect(() => dispose), ctx.setTimeout/setInterval, and services other mounts provide, named in inject (their methods are async). Each call into the code is time-bounded; code that spins or exhausts memory is removed. A plugin whose inject is not yet available mounts as pending and starts when it appears. Returns a handle; remove it with cordis_unmount.`

/** `cordis_mount` and `cordis_unmount`. */
export function mountTools(mounts: Mounts): ToolDefinition[] {
  const mount = defineTool({
    name: 'cordis_mount',
    description: MOUNT_DESCRIPTION,
    parameters: Schema.object({
      code: Schema.string().description('The function body that returns the plugin.'),
      package: Schema.string().description("An installed package's name (only those on the configured allow-list)."),
      config: Schema.dict(Schema.any()).description("The plugin's config (default {})."),
    }),
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
    execute: (args, exec) => mounts.mount(args, exec),
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
    execute: (args, exec) => mounts.unmount(args.id, exec),
  })
  return [mount, unmount]
}
