import type { Context, Fiber } from 'cordis'
import { CordisToolError } from './errors.js'
import { createFacade } from './facade.js'
import { Sandbox, type SandboxLogger } from './sandbox.js'
import { ToolBridge } from './tool-bridge.js'

/** What `cordis_mount` returns and `cordis_inspect` lists: a typed handle to one temporary plugin. */
export interface MountHandle {
  id: string
  pluginName: string
  state: 'active' | 'pending'
  provides: string[]
  waitingFor: string[]
}

interface Mount {
  id: string
  pluginName: string
  fiber: Fiber
  inject: string[]
  provides: Set<string>
}

// Cordis fiber states (4.0.0-rc.10 `FiberState`): 0 pending, 1 loading, 2 active, 3 failed, 4 disposed.
const FIBER_PENDING = 0
const FIBER_FAILED = 3

const PLUGIN_FORMS = 'return a plugin: a function `(ctx, config) => { … }`, or an object `{ name?, inject?, apply(ctx, config) { … } }`'

/** Reads the plugin the code returned: its apply function, name and declared services. */
function readPlugin(value: unknown): { apply: Function; name: string; inject: string[] } {
  if (typeof value === 'function') return { apply: value, name: value.name || '<anonymous>', inject: injectOf((value as { inject?: unknown }).inject) }
  if (value && typeof value === 'object' && typeof (value as { apply?: unknown }).apply === 'function') {
    const plugin = value as { apply: Function; name?: unknown; inject?: unknown }
    return { apply: plugin.apply, name: typeof plugin.name === 'string' && plugin.name ? plugin.name : '<anonymous>', inject: injectOf(plugin.inject) }
  }
  throw new CordisToolError(
    'MOUNT_NOT_A_PLUGIN',
    value === undefined ? `the code returned nothing; ${PLUGIN_FORMS}` : `the code returned ${typeof value}, not a plugin; ${PLUGIN_FORMS}`,
  )
}

function injectOf(inject: unknown): string[] {
  if (inject === undefined) return []
  const names = Array.isArray(inject) ? inject : inject && typeof inject === 'object' ? Object.keys(inject) : undefined
  if (!names || !names.every((name) => typeof name === 'string')) throw new CordisToolError('MOUNT_NOT_A_PLUGIN', 'inject must be a list of service names')
  return [...names] as string[]
}

/**
 * The temporary plugins, all children of one group fiber: unloading the owner disposes the group and
 * with it every mount and whatever each registered. Ids `dyn-1`, `dyn-2`, … are never reused.
 */
export class Mounts {
  private readonly table = new Map<string, Mount>()
  private sequence = 0

  constructor(
    private readonly group: Context,
    private readonly timeoutMs: number,
    private readonly logger: SandboxLogger,
  ) {}

  async mount(code: string): Promise<MountHandle> {
    const id = `dyn-${++this.sequence}`
    const sandbox = new Sandbox(id, this.timeoutMs, this.logger)
    const bridge = new ToolBridge(sandbox)
    sandbox.lend({ defineTool: bridge.define })
    const plugin = readPlugin(await sandbox.evaluate(code))
    const provides = new Set<string>()
    const fiber = this.group.plugin({
      name: plugin.name,
      inject: plugin.inject,
      apply: (real: Context, config: unknown) => {
        const facade = createFacade({ real, inject: plugin.inject, sandbox, bridge, config, onProvide: (name) => provides.add(name) })
        try {
          return sandbox.call(plugin.apply, undefined, [facade, config])
        } catch (error) {
          throw sandbox.failure('apply', error)
        }
      },
    })
    try {
      await fiber
      if (fiber.state === FIBER_FAILED) throw new Error('the plugin failed to start')
    } catch (error) {
      await fiber.dispose().catch(() => {})
      throw this.rollback(plugin.name, error)
    }
    const mount: Mount = { id, pluginName: plugin.name, fiber, inject: plugin.inject, provides }
    this.table.set(id, mount)
    return this.handle(mount)
  }

  /** Disposes a mount to quiescence: its tools, listeners, services, timers and effects are gone when this resolves. */
  async unmount(id: string): Promise<{ id: string; pluginName: string }> {
    const mount = this.table.get(id)
    if (!mount)
      throw new CordisToolError(
        'UNKNOWN_MOUNT',
        `no temporary plugin ${JSON.stringify(id)} (only mounts can be unmounted; list them with cordis_inspect { "what": "temporary" })`,
      )
    this.table.delete(id)
    await mount.fiber.dispose()
    return { id, pluginName: mount.pluginName }
  }

  /** Handles of every mount, oldest first, with their current state. */
  list(): MountHandle[] {
    return [...this.table.values()].map((mount) => this.handle(mount))
  }

  private handle(mount: Mount): MountHandle {
    const pending = mount.fiber.state === FIBER_PENDING
    const waitingFor = pending ? mount.inject.filter((name) => this.group.get(name as never) === undefined) : []
    return { id: mount.id, pluginName: mount.pluginName, state: pending ? 'pending' : 'active', provides: pending ? [] : [...mount.provides], waitingFor }
  }

  private rollback(name: string, error: unknown): CordisToolError {
    if (CordisToolError.is(error) && error.code !== 'MOUNT_FAILED') return error
    const message = (error as Error)?.message ?? String(error)
    const clash = /already registered|duplicate|has been registered/i.test(message)
    const owner = clash ? [...this.table.values()].find((mount) => message.includes(mount.pluginName)) : undefined
    const hint = clash
      ? ` (a name is taken${owner ? `, perhaps by ${owner.id}; unmount it first` : '; pick another name or unmount the mount that owns it'})`
      : ''
    return new CordisToolError(
      'MOUNT_FAILED',
      `plugin "${name}" did not start and was rolled back: ${message.replace(/^apply threw: /, 'apply threw: ')}${hint}`,
    )
  }
}
