import { Context } from 'cordis'
import type { ExecuteInput, ToolSchema } from '@cordage/registry'
import { FacadeError } from './errors.js'
import type { Sandbox } from './sandbox.js'
import type { ToolBridge } from './tool-bridge.js'

/** What one mounted plugin's façade is built from. */
export interface FacadeOptions {
  /** The real context Cordis gave the mounted plugin (registrations on it are disposed with the mount). */
  real: Context
  /** The services the plugin declared in `inject`. */
  inject: readonly string[]
  sandbox: Sandbox
  bridge: ToolBridge
  config: unknown
  /** Called with each service name the mount provides. */
  onProvide(name: string): void
}

const WITHHELD = new Set([
  'root',
  'plugin',
  'fiber',
  'registry',
  'reflect',
  'events',
  'inject',
  'runtime',
  'extend',
  'isolate',
  'intercept',
  'scope',
  'lifecycle',
  'loader',
])

function withheld(name: string): FacadeError {
  return new FacadeError(
    `ctx.${name} is withheld from mounted plugins; use ctx.tools, ctx.on, ctx.emit, ctx.provide, ctx.effect, ctx.setTimeout/setInterval and the services you declare in inject`,
  )
}

function isContext(value: unknown): boolean {
  return value instanceof Context
}

/**
 * A declared service, proxied so that nothing reached through it hands back a Cordis Context (a
 * property, a method's return value, or what its promise resolves to), which would re-open everything
 * the façade withholds. Writes are refused.
 */
function guardService(service: object, name: string): object {
  const deny = () => new FacadeError(`service ${name} returned a Cordis context, which mounted plugins may not hold`)
  const check = (value: unknown): unknown => {
    if (isContext(value)) throw deny()
    if (value && typeof (value as PromiseLike<unknown>).then === 'function') {
      return Promise.resolve(value).then((settled) => {
        if (isContext(settled)) throw deny()
        return settled
      })
    }
    return value
  }
  return new Proxy(service, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver)
      if (typeof value === 'function') return (...args: unknown[]) => check(value.apply(target, args))
      return check(value)
    },
    set() {
      throw new FacadeError(`service ${name} is read-only to mounted plugins`)
    },
    defineProperty() {
      throw new FacadeError(`service ${name} is read-only to mounted plugins`)
    },
    deleteProperty() {
      throw new FacadeError(`service ${name} is read-only to mounted plugins`)
    },
  })
}

/**
 * The context a mounted plugin's `apply` receives. Tools only through the mount's `defineTool`, a
 * schema view instead of live definitions (no body can be called around the pipeline), services only
 * those declared in `inject`, and no framework internals. Every registration it makes is an effect of
 * the mount, so unmounting unwinds it.
 */
export function createFacade(options: FacadeOptions): object {
  const { real, inject, sandbox, bridge } = options
  const declared = new Set(inject)
  const tools = Object.freeze({
    register: (ticket: unknown) => {
      real.tools.register(bridge.definition(ticket))
    },
    get: (name: string): ToolSchema | undefined => real.tools.list().find((tool) => tool.name === name),
    list: (): ToolSchema[] => real.tools.list(),
    execute: (input: ExecuteInput) => real.tools.execute(input),
  })
  const guard = (callback: unknown, what: string): ((...args: unknown[]) => unknown) => {
    if (typeof callback !== 'function') throw new FacadeError(`${what} takes a function`)
    return (...args: unknown[]) => sandbox.call(callback, undefined, args)
  }
  const members: Record<string, unknown> = {
    tools,
    config: options.config,
    get: (name: string) => service(name),
    on: (name: string, listener: unknown, prepend?: boolean) => real.on(name as never, guard(listener, 'ctx.on') as never, prepend),
    emit: (name: string, ...args: unknown[]) => (real.emit as (name: string, ...args: unknown[]) => void)(name, ...args),
    provide: (name: string, value: unknown) => {
      if (typeof name !== 'string' || !/^[a-z][\w-]*$/i.test(name)) throw new FacadeError('ctx.provide(name, value) needs a service name')
      real.provide(name, value)
      options.onProvide(name)
    },
    effect: (execute: unknown) => real.effect(guard(execute, 'ctx.effect') as never),
    setTimeout: (callback: unknown, ms: number) =>
      real.effect(() => {
        const timer = setTimeout(guard(callback, 'ctx.setTimeout'), ms)
        return () => clearTimeout(timer)
      }),
    setInterval: (callback: unknown, ms: number) =>
      real.effect(() => {
        const timer = setInterval(guard(callback, 'ctx.setInterval'), Math.max(1, ms))
        return () => clearInterval(timer)
      }),
  }
  function service(name: string): unknown {
    if (name === 'tools') return tools
    if (!declared.has(name)) {
      if (WITHHELD.has(name)) throw withheld(name)
      const live = real.get(name as never) !== undefined
      throw new FacadeError(
        live
          ? `service ${name} is not declared: add it to the plugin's inject (inject: ['${name}'])`
          : `there is no service ${name}; declare it in inject to wait for it`,
      )
    }
    const value = real.get(name as never) as unknown
    return value && typeof value === 'object' ? guardService(value, name) : value
  }
  return new Proxy(Object.create(null) as object, {
    get(_target, prop) {
      if (typeof prop === 'symbol') return undefined
      if (Object.hasOwn(members, prop)) return members[prop]
      if (prop === 'then') return undefined
      return service(prop)
    },
    has(_target, prop) {
      return typeof prop === 'string' && (Object.hasOwn(members, prop) || declared.has(prop))
    },
    set(_target, prop) {
      throw new FacadeError(`the context is read-only to mounted plugins (tried to set ${String(prop)})`)
    },
    defineProperty(_target, prop) {
      throw new FacadeError(`the context is read-only to mounted plugins (tried to define ${String(prop)})`)
    },
    deleteProperty(_target, prop) {
      throw new FacadeError(`the context is read-only to mounted plugins (tried to delete ${String(prop)})`)
    },
    ownKeys() {
      return [...Object.keys(members), ...declared]
    },
    getOwnPropertyDescriptor(_target, prop) {
      if (typeof prop !== 'string' || !(Object.hasOwn(members, prop) || declared.has(prop))) return undefined
      return { configurable: true, enumerable: true, writable: false, value: undefined }
    },
    getPrototypeOf() {
      return null
    },
  })
}
