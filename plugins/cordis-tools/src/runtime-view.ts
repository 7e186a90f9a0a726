import type { Context, Fiber } from 'cordis'
import { fiberStateName } from '@cordage/registry'

// What cordis_inspect reads of the Cordis runtime. These are the documented shapes of cordis
// 4.0.0-rc.10 (pinned exactly): `ctx.registry` iterates plugin runtimes whose `fibers` list their live
// fibers; `ctx.reflect.store` maps isolation symbols to `{ name, fiber, value }`; fibers carry `uid`,
// `state` and their `parent` context. The plugin's tests pin each reading.

/** One live plugin fiber. */
export interface PluginEntry {
  uid: number
  name: string
  state: string
  /** The uid of the fiber it was loaded under (0: the root). */
  parent: number
}

/** One provided service. */
export interface ServiceEntry {
  name: string
  owner: string
  state: string
}

/** Every live plugin fiber, by uid. */
export function pluginFibers(ctx: Context): PluginEntry[] {
  const entries: PluginEntry[] = []
  for (const runtime of ctx.registry.values()) {
    for (const fiber of runtime.fibers) {
      if (fiber.uid === null) continue
      entries.push({ uid: fiber.uid, name: fiber.name || '<anonymous>', state: fiberStateName(fiber), parent: fiber.parent.fiber?.uid ?? 0 })
    }
  }
  return entries.sort((a, b) => a.uid - b.uid)
}

/** Every service with a value, with the fiber that provided it. */
export function services(ctx: Context): ServiceEntry[] {
  const store = ctx.reflect.store
  const entries: ServiceEntry[] = []
  for (const key of Object.getOwnPropertySymbols(store)) {
    const impl = store[key]
    if (!impl || impl.value === undefined) continue
    entries.push({ name: impl.name, owner: impl.fiber?.name || 'root', state: impl.fiber ? fiberStateName(impl.fiber) : 'active' })
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** The services one fiber provides. */
export function servicesOf(ctx: Context, fiber: Fiber): string[] {
  const store = ctx.reflect.store
  const names: string[] = []
  for (const key of Object.getOwnPropertySymbols(store)) {
    const impl = store[key]
    if (impl && impl.value !== undefined && impl.fiber === fiber) names.push(impl.name)
  }
  return names.sort()
}
