import type { Context, Fiber } from 'cordis'
import { ToolArgsError, type JsonValue, type ToolDefinition, type ToolExec, errorMessage } from '@cordage/core'
import { FiberState, type ApprovalService, type ToolRegistry } from '@cordage/registry'
import type { CodeRunner } from '@cordage/services'
import type { GuestBridge, MountLogger } from './bridge.js'
import { rollback, startCodeMount } from './code-mount.js'
import { CordisToolError } from './errors.js'
import type { Config } from './index.js'
import { importPackage } from './packages.js'
import { servicesOf } from './runtime-view.js'
import type { ServiceTable } from './services.js'

/** What `cordis_mount` returns and `cordis_inspect` lists: a typed handle to one temporary plugin. */
export interface MountHandle {
  id: string
  pluginName: string
  state: 'active' | 'pending'
  provides: string[]
  waitingFor: string[]
}

/** The plugin's config, as the mounts use it (`cwd` resolved). */
export type MountSettings = Config

/** What the mounts reach in the runtime, read when needed (the registry as the plugin was given it). */
export interface MountHost {
  tools: ToolRegistry
  codeMode(): CodeRunner | undefined
  approval(): ApprovalService | undefined
}

/** What `cordis_mount` is asked to mount. */
export interface MountRequest {
  code?: string
  package?: string
  config?: JsonValue
}

interface Mount {
  id: string
  pluginName: string
  fiber: Fiber
  inject: string[]
  /** The child run that mounted it; it is removed when that run ends. */
  owner: string | undefined
  /** The sandbox side of a mount of code (absent for an installed package, which runs in the host). */
  bridge?: GuestBridge
}

/**
 * The temporary plugins: each a child fiber of one group fiber, so unloading the owner disposes the
 * group and with it every mount. Code runs in a Code Mode sandbox session behind the façade; an
 * installed package on the allow-list runs in the host like a configured plugin. What a child run
 * mounts is owned by it: its tools answer only it, its listeners see only its calls, and it is removed
 * when the run ends. Ids `dyn-1`, `dyn-2`, … are never reused.
 */
export class Mounts {
  private readonly table = new Map<string, Mount>()
  /** Why a mount that ended on its own was removed, for the next `cordis_unmount` of it. */
  private readonly removed = new Map<string, string>()
  /** Tools mounts registered, by name: which mount, and the definition (a name registered again by someone else is not theirs). */
  private readonly toolOwners = new Map<string, { mount: string; definition: ToolDefinition | undefined }>()
  private readonly services: ServiceTable = new Map()
  private readonly children = new Set<string>()
  private sequence = 0

  constructor(
    private readonly group: Context,
    private readonly root: Context,
    private readonly settings: MountSettings,
    private readonly logger: MountLogger,
    private readonly host: MountHost,
  ) {}

  async mount(request: MountRequest, exec: ToolExec): Promise<MountHandle> {
    const hasCode = typeof request.code === 'string'
    if (hasCode === (typeof request.package === 'string'))
      throw new ToolArgsError(
        'cordis_mount takes either code (JavaScript returning a plugin) or package (an installed package the config allows), not both or neither',
      )
    const owner = exec.agent !== undefined && this.children.has(exec.agent) ? exec.agent : undefined
    const id = `dyn-${++this.sequence}`
    const mount = hasCode
      ? await this.mountCode(id, request.code!, request.config, owner)
      : await this.mountPackage(id, request.package!, request.config, exec, owner)
    this.table.set(id, mount)
    // The child that asked may have ended while the mount started.
    if (owner !== undefined && !this.children.has(owner)) {
      await this.remove(mount)
      throw new CordisToolError('MOUNT_FAILED', `the subagent ${owner} that mounted ${id} has ended, so ${id} was removed`)
    }
    await this.settle()
    return this.handle(mount)
  }

  /** Disposes a mount to quiescence, within `timeoutMs` whatever its disposers do. A child may unmount only its own mounts. */
  async unmount(id: string, exec: ToolExec): Promise<{ id: string; pluginName: string }> {
    const mount = this.table.get(id)
    if (!mount) {
      const removed = this.removed.get(id)
      throw new CordisToolError(
        'UNKNOWN_MOUNT',
        removed
          ? `${id} is gone: ${removed}`
          : `no temporary plugin ${JSON.stringify(id)} (only mounts can be unmounted; list them with cordis_inspect { "what": "temporary" })`,
      )
    }
    const caller = exec.agent !== undefined && this.children.has(exec.agent) ? exec.agent : undefined
    if (caller !== undefined && mount.owner !== caller)
      throw new CordisToolError('FOREIGN_MOUNT', `${id} was not mounted by this subagent, so it cannot unmount it`)
    await this.remove(mount)
    await this.settle()
    return { id, pluginName: mount.pluginName }
  }

  /** Handles of every mount, oldest first, with their current state. */
  list(): MountHandle[] {
    return [...this.table.values()].map((mount) => this.handle(mount))
  }

  /** The registry guard: a tool a child mounted answers only that child. */
  guard = (exec: ToolExec): string | undefined => {
    const owned = this.toolOwners.get(exec.name)
    if (owned === undefined || this.host.tools.get(exec.name) !== owned.definition) return undefined
    const owner = this.table.get(owned.mount)?.owner
    if (owner === undefined || exec.agent === owner) return undefined
    return `tool "${exec.name}" was mounted by subagent ${owner} (${owned.mount}) and only it may call it`
  }

  childStarted(runId: string): void {
    this.children.add(runId)
  }

  /** A child run ended: what it mounted goes with it. */
  async childEnded(runId: string): Promise<void> {
    this.children.delete(runId)
    const owned = [...this.table.values()].filter((mount) => mount.owner === runId)
    await Promise.all(owned.map((mount) => this.removeOnItsOwn(mount, `the subagent ${runId} that mounted it ended`)))
  }

  /** Removes every mount (the plugin is unloading). */
  async close(): Promise<void> {
    await Promise.all([...this.table.values()].map((mount) => this.remove(mount)))
  }

  private async mountCode(id: string, code: string, config: JsonValue | undefined, owner: string | undefined): Promise<Mount> {
    const codeMounts = [...this.table.values()].filter((mount) => mount.bridge).length
    if (codeMounts >= this.settings.maxMounts)
      throw new CordisToolError('MOUNT_LIMIT', `${codeMounts} mounts of code are active (maxMounts ${this.settings.maxMounts}); unmount one first`)
    const codeMode = this.host.codeMode()
    if (!codeMode) throw new CordisToolError('MOUNT_FAILED', 'mounting code needs the code-mode plugin, whose sandbox runs it: load @cordage/plugin-code-mode')
    const { timeoutMs, toolTimeoutMs } = this.settings
    const started = await startCodeMount(codeMode, this.group, code, config, {
      id,
      timeoutMs,
      toolTimeoutMs,
      owner,
      tools: this.host.tools,
      services: this.services,
      logger: this.logger,
      ownTool: (definition) => void this.toolOwners.set(definition.name, { mount: id, definition }),
      onEnd: (error) => {
        const mount = this.table.get(id)
        if (mount) void this.removeOnItsOwn(mount, `its sandbox ended: ${error.message}`)
      },
    })
    return { id, pluginName: started.pluginName, fiber: started.fiber, inject: started.inject, owner, bridge: started.bridge }
  }

  private async mountPackage(id: string, name: string, config: JsonValue | undefined, exec: ToolExec, owner: string | undefined): Promise<Mount> {
    const { packages, packageApproval, cwd } = this.settings
    if (!packages.includes(name)) {
      throw new CordisToolError(
        'MOUNT_DENIED',
        `package "${name}" is not on cordis-tools' packages allow-list (${packages.length ? packages.join(', ') : 'empty'}); only listed packages can be mounted`,
      )
    }
    if (packageApproval === 'ask') {
      const approval = this.host.approval()
      if (!approval)
        throw new CordisToolError(
          'MOUNT_DENIED',
          `mounting package "${name}" needs approval and no approval service is loaded (packageApproval: 'allow' skips asking)`,
        )
      const answer = await approval.request(exec, `mount the installed package ${name}: its code runs in the host with full access`)
      if (answer !== 'allow') throw new CordisToolError('MOUNT_DENIED', `mounting package "${name}" was not approved`)
    }
    const plugin = await importPackage(name, cwd)
    const before = new Set(this.host.tools.list().map((tool) => tool.name))
    const fiber = this.group.plugin(plugin, config ?? {})
    try {
      await fiber
      if (fiber.state === FiberState.FAILED) throw new Error('the plugin failed to start')
    } catch (error) {
      await fiber.dispose().catch(() => {})
      throw rollback(name, error)
    }
    if (owner !== undefined) {
      for (const tool of this.host.tools.list())
        if (!before.has(tool.name)) this.toolOwners.set(tool.name, { mount: id, definition: this.host.tools.get(tool.name) })
    }
    const inject = Object.keys((fiber as { inject?: Record<string, unknown> }).inject ?? {})
    return { id, pluginName: fiber.name || name, fiber, inject, owner }
  }

  private async removeOnItsOwn(mount: Mount, why: string): Promise<void> {
    if (!this.table.has(mount.id)) return
    this.removed.set(mount.id, why)
    this.logger.warn(`[cordis:${mount.id}] removed: ${why}`)
    await this.remove(mount)
  }

  /**
   * Disposes the mount's fiber (its registrations, and its effects' disposers in the sandbox sharing one
   * deadline), then closes its sandbox; past the deadline the sandbox is closed at once, so disposers
   * still running are abandoned and the fiber finishes disposing.
   */
  private async remove(mount: Mount): Promise<void> {
    if (!this.table.delete(mount.id)) return
    for (const [name, owned] of this.toolOwners) if (owned.mount === mount.id) this.toolOwners.delete(name)
    const { bridge } = mount
    const { timeoutMs } = this.settings
    if (bridge) bridge.deadline = performance.now() + timeoutMs
    const stop = bridge ? setTimeout(() => void bridge.session.close(), timeoutMs) : undefined
    try {
      await mount.fiber.dispose()
    } catch (error) {
      this.logger.warn(`[cordis:${mount.id}] unmounting failed: ${errorMessage(error)}`)
    } finally {
      clearTimeout(stop)
      await bridge?.session.close()
    }
  }

  /**
   * Waits until no mount is starting or stopping: a mount that provides a service starts the mounts
   * waiting for it (and unmounting it sends them back to pending), each bounded by `timeoutMs`; the
   * caller then sees the runtime as it ends up.
   */
  private async settle(): Promise<void> {
    await Promise.all([...this.table.values()].map((mount) => mount.fiber.await().catch(() => {})))
  }

  private handle(mount: Mount): MountHandle {
    const pending = mount.fiber.state === FiberState.PENDING
    const waitingFor = pending ? mount.inject.filter((name) => this.group.get(name as never) === undefined) : []
    const provides = pending ? [] : mount.bridge ? [...mount.bridge.provides].sort() : servicesOf(this.root, mount.fiber)
    return { id: mount.id, pluginName: mount.pluginName, state: pending ? 'pending' : 'active', provides, waitingFor }
  }
}
