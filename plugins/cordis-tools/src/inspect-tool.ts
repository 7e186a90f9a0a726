import Schema from 'schemastery'
import type { Context } from 'cordis'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { CordisToolError } from './errors.js'
import { EVENTS } from './events.js'
import type { Mounts } from './mounts.js'
import { pluginFibers, services } from './runtime-view.js'

const SECTIONS = ['services', 'plugins', 'tools', 'temporary', 'events'] as const
type Section = (typeof SECTIONS)[number]

const Handle = Schema.object({
  id: Schema.string().required(),
  pluginName: Schema.string().required(),
  state: Schema.union(['active', 'pending'] as const).required(),
  provides: Schema.array(Schema.string()).required(),
  waitingFor: Schema.array(Schema.string()).required(),
})

/** A mount handle's schema, shared with `cordis_mount`. */
export { Handle as MountHandleSchema }

const Report = Schema.object({
  services: Schema.array(Schema.object({ name: Schema.string().required(), owner: Schema.string().required(), state: Schema.string().required() })),
  plugins: Schema.array(
    Schema.object({
      uid: Schema.natural().required(),
      name: Schema.string().required(),
      state: Schema.string().required(),
      parent: Schema.natural().required(),
    }),
  ),
  tools: Schema.array(Schema.object({ name: Schema.string().required(), description: Schema.string().required() })),
  temporary: Schema.array(Handle),
  events: Schema.array(
    Schema.object({
      name: Schema.string().required(),
      mode: Schema.union(['emit', 'waterfall'] as const).required(),
      signature: Schema.string().required(),
      note: Schema.string().required(),
    }),
  ),
})

const HEADINGS: Record<Section, string> = { services: 'Services', plugins: 'Plugins', tools: 'Tools', temporary: 'Temporary plugins', events: 'Events' }

function lines(section: Section, items: any[]): string[] {
  switch (section) {
    case 'services':
      return items.map((item) => `${item.name} — provided by ${item.owner}${item.state === 'active' ? '' : ` (${item.state})`}`)
    case 'plugins':
      return items.map((item) => `#${item.uid} ${item.name} [${item.state}]${item.parent ? ` under #${item.parent}` : ''}`)
    case 'tools':
      return items.map((item) => `${item.name} — ${item.description}`)
    case 'temporary':
      return items.map(
        (item) =>
          `${item.id} ${item.pluginName} [${item.state}]${item.provides.length ? ` provides ${item.provides.join(', ')}` : ''}${item.waitingFor.length ? ` waiting for ${item.waitingFor.join(', ')}` : ''}`,
      )
    case 'events':
      return items.map((item) => `${item.name} (${item.mode}) ${item.signature} — ${item.note}`)
  }
}

/** `cordis_inspect`: a typed report of the live runtime, rendered as `## Heading` sections. */
export function inspectTool(ctx: Context, mounts: Mounts): ToolDefinition {
  return defineTool({
    name: 'cordis_inspect',
    description:
      'Inspect the running plugin runtime: live services and who provides them, the plugin tree, the visible tools, the temporary plugins mounted with cordis_mount, and the events plugins can listen to (with dispatch mode and signature). `what` picks one section; `name` narrows it to one entry.',
    parameters: Schema.object({
      what: Schema.union([...SECTIONS]).description('One section (default: all).'),
      name: Schema.string().description('Only the entry with this name (a service, plugin, tool, mount id or event).'),
    }),
    concurrency: 'parallel',
    output: {
      schema: Report,
      render: (_args, value) => [
        {
          type: 'text',
          text: SECTIONS.filter((section) => value[section] !== undefined)
            .map((section) => `## ${HEADINGS[section]}\n${lines(section, value[section]!).join('\n') || '(none)'}`)
            .join('\n\n'),
        },
      ],
    },
    execute(args) {
      const wanted: readonly Section[] = args.what ? [args.what] : SECTIONS
      const all = {
        services: () => services(ctx),
        plugins: () => pluginFibers(ctx),
        tools: () => ctx.tools.list().map((tool) => ({ name: tool.name, description: tool.description.split('\n', 1)[0] ?? '' })),
        temporary: () => mounts.list(),
        events: () => [...EVENTS],
      }
      const report: Record<string, any[]> = {}
      for (const section of wanted) {
        const items: any[] = all[section]()
        report[section] =
          args.name === undefined ? items : items.filter((item) => item.name === args.name || item.id === args.name || item.pluginName === args.name)
      }
      if (args.name !== undefined && Object.values(report).every((items) => items.length === 0)) {
        throw new CordisToolError('NOT_FOUND', `nothing named ${JSON.stringify(args.name)} in ${wanted.join(', ')}`)
      }
      return report as any
    },
  })
}
