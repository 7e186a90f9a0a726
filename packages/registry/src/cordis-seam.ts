import { Context, getTraceable, symbols, type Fiber } from 'cordis'

// Every read of Cordis internals lives here. Each holds for cordis 4.0.0-rc.10 (pinned exactly);
// `tests/cordis-seam.test.ts` checks each assumption by name, so an upgrade that breaks one fails there.
// The package index exports only `listenerCount`, `FiberState` and `fiberStateName`; the rest is
// reached through `@cordage/registry/cordis-seam` by the packages the lint check allows (see README).

/**
 * cordis's fiber states (`Fiber['state']`), by name: its own `FiberState` is a const enum in its
 * declarations, so not importable as a value. Assumption: the numbering of cordis 4.0.0-rc.10.
 */
export const FiberState = {
  PENDING: 0,
  LOADING: 1,
  ACTIVE: 2,
  FAILED: 3,
  DISPOSED: 4,
  UNLOADING: 5,
} as const
export type FiberState = (typeof FiberState)[keyof typeof FiberState]

const STATE_NAMES = ['pending', 'loading', 'active', 'failed', 'disposed', 'unloading'] as const

/** A fiber's state as a word (`pending`, `loading`, `active`, `failed`, `disposed`, `unloading`). */
export function fiberStateName(fiber: Pick<Fiber, 'state'>): string {
  return STATE_NAMES[fiber.state] ?? `state ${fiber.state}`
}

/** A cordis event hook as the events service stores it (`ctx.on` wraps the listener in `callback`). */
export interface Hook {
  callback: (...args: any[]) => any
}

/** The events service's listener lists by event name, in dispatch order (prepended listeners first). */
export type HookTable = Record<string, Hook[] | undefined>

/**
 * The object behind a Context-bound proxy (a service or the events service read through a Context).
 * Assumption: a traceable proxy answers `symbols.original` with its target; plain objects have none.
 */
export function unproxied<T>(value: T): T {
  return ((value as any)?.[symbols.original] ?? value) as T
}

/**
 * The live listener table of `ctx`'s events service, read once and consulted per dispatch without a
 * Context property read. Assumption: `EventsService._hooks[name]` is the array `ctx.on` appends to
 * (and unshifts to when prepending), deleted when its last listener goes.
 */
export function hookTable(ctx: Context): HookTable {
  return unproxied(ctx.events as any)._hooks as HookTable
}

/**
 * `ctx.on(name, listener, prepend)` for a listener on a hot path whose arguments are plain data (a call's
 * `exec` and result): the same hook, disposed with `ctx`'s fiber, without `ctx.on`'s per-dispatch wrapper
 * (a proxy that passes `this` and every argument through the Context's tracing on each call, about 0.4 µs
 * a dispatch). Assumption: `EventsService.register(label, name, callback, { prepend })` read through
 * `ctx` adds `{ ctx, callback }` to `_hooks[name]` as an effect of `ctx`'s fiber and returns its disposer.
 */
export function onDirect(ctx: Context, name: string, listener: (...args: any[]) => any, prepend = false): () => void {
  return (ctx.events as any).register(`ctx.on(${JSON.stringify(name)})`, name, listener, { prepend })
}

/** How many listeners `ctx` has on `name` (for tests asserting disposal). */
export function listenerCount(ctx: Context, name: string): number {
  return hookTable(ctx)[name]?.length ?? 0
}

/**
 * Makes methods read through a Context-bound proxy of `service` the instance's own functions, with no
 * per-call shadow context. Only for services whose methods never depend on the caller's context.
 * Assumption: a service's `symbols.tracker` is a mutable object honouring `noShadow`.
 */
export function skipShadowContexts(service: object): void {
  ;(service as any)[symbols.tracker].noShadow = true
}

const installed = new Map<string, number>()
/** A provided service as the reflect service stores it. */
interface Provided {
  value: unknown
  fiber: { state: number }
}
const internals = new WeakMap<object, { hooks: HookTable; store: Record<symbol, Provided | undefined> }>()

/** What one context resolves services through (stable for the context's lifetime), and its last view. */
interface ContextRecord {
  ctx: any
  root: any
  fiber: any
  isolate: Record<string, symbol | undefined>
  known: { hooks: HookTable; store: Record<symbol, Provided | undefined> }
  views: Map<string, { service: object; view: object }>
}
const records = new WeakMap<object, ContextRecord>()

/**
 * Lets `ctx.<name>.<method>(...)` skip cordis's per-read costs for the methods named in `contextFree`
 * (methods that never depend on the caller's context). A Context read of a service builds an `Error`
 * for its inject check (a stack capture) and a tracing proxy, and each method read through that proxy
 * reads `ctx.reflect` again (figures in the README). This installs a getter on `Context.prototype` that
 * resolves the service as cordis does (injected fibers, isolation, `internal/get` listeners; the same
 * errors when it may not) and returns, per context and service instance, one object whose
 * `contextFree` methods are the instance's own and whose other members go through cordis's tracing
 * proxy for that context (so `register` stays an effect of the caller). Reference-counted; the
 * returned function removes the getter with its last user.
 * Assumptions: the Context proxy answers properties found on the prototype chain itself (through
 * `getTraceable`, which passes values without a tracker as they are); fibers keep injected services in
 * `fiber.store[name].value`; the reflect service keeps provided services in `store[isolateKey]`.
 */
export function fastServiceAccessor(name: string, contextFree: readonly string[]): () => void {
  const count = installed.get(name) ?? 0
  if (count === 0) {
    // Something else owns this name on the prototype: leave it to cordis's own resolution.
    if (Object.getOwnPropertyDescriptor(Context.prototype, name)) return () => {}
    Object.defineProperty(Context.prototype, name, {
      configurable: true,
      enumerable: false,
      get(this: any) {
        const record = recordOf(this)
        const service = resolveService(record, name)
        return service && typeof service === 'object' ? facade(record, name, service, contextFree) : service
      },
    })
  }
  installed.set(name, count + 1)
  let released = false
  return () => {
    if (released) return
    released = true
    const left = installed.get(name)! - 1
    if (left > 0) return void installed.set(name, left)
    installed.delete(name)
    delete (Context.prototype as any)[name]
  }
}

/**
 * What `ctx.get(name)` resolves to, as the instance itself rather than a tracing proxy: no proxy and no
 * per-call shadow context, so `this.ctx` inside its methods is the service's own context. For services
 * called on every turn of a loop (the model, the registry) whose methods never depend on the caller.
 * Assumptions: the reflect service keeps provided services in `store[ctx[symbols.isolate][name]]` as
 * `{ value, fiber }`, and `get` treats one whose fiber is not active as absent.
 */
export function serviceOf<T>(ctx: Context, name: string): T | undefined {
  const record = recordOf(ctx)
  const key = record.isolate[name]
  const provided = key === undefined ? undefined : record.known.store[key]
  return provided && provided.fiber.state === FiberState.ACTIVE ? (provided.value as T) : undefined
}

function facade(record: ContextRecord, name: string, service: object, contextFree: readonly string[]): object {
  const last = record.views.get(name)
  if (last?.service === service) return last.view
  const view = Object.create(getTraceable(record.ctx, service)) as object
  // An own, empty tracker: cordis passes the view through as it is instead of wrapping it again.
  Object.defineProperty(view, symbols.tracker, { value: undefined })
  for (const key of contextFree) {
    const method = (service as any)[key]
    if (typeof method === 'function') Object.defineProperty(view, key, { value: method.bind(service) })
  }
  record.views.set(name, { service, view })
  return view
}

function recordOf(ctx: any): ContextRecord {
  let record = records.get(ctx)
  if (record) return record
  const root = ctx.root
  let known = internals.get(root)
  if (!known) internals.set(root, (known = { hooks: hookTable(root), store: unproxied(root.reflect).store }))
  const defSite = ctx[symbols.shadow] ?? ctx
  record = { ctx, root, fiber: defSite.fiber, isolate: ctx[symbols.isolate], known, views: new Map() }
  records.set(ctx, record)
  return record
}

/** Mirrors cordis's `ReflectService.handler.get` for a service property, building the error only when it throws. */
function resolveService(record: ContextRecord, name: string): unknown {
  const { fiber, known } = record
  if (!fiber.runtime) {
    const key = record.isolate[name]
    return key === undefined ? undefined : known.store[key]?.value
  }
  // The common case first, with no closures: the reading plugin injected the service itself.
  if (!known.hooks['internal/get']?.length) return fiber.store?.[name]?.value ?? walkFibers(record, name)
  const ctx = record.ctx
  return unproxied(ctx.events.waterfall('internal/get', ctx, name, missing(name), () => walkFibers(record, name)))
}

function walkFibers(record: ContextRecord, name: string): unknown {
  const key = record.root[symbols.isolate][name]
  let fiber = record.fiber
  for (;;) {
    const impl = fiber.store?.[name]
    if (impl) return impl.value
    if (name in fiber.inject) throw missing(name, `cannot get required service "${name}" in inactive context`)
    if (!fiber.runtime || fiber.parent[symbols.isolate][name] !== key) throw missing(name)
    fiber = fiber.parent.fiber
  }
}

function missing(name: string, message = `cannot get property "${name}" without inject`): Error {
  return new Error(message)
}
