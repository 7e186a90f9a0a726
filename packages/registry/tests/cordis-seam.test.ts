import { describe, expect, it } from 'vitest'
import { Context, Service, symbols } from 'cordis'
import { fastServiceAccessor, hookTable, listenerCount, onDirect, serviceOf, skipShadowContexts, unproxied } from '../src/cordis-seam.js'
import { ToolRegistry } from '../src/registry.js'

// Each test names one assumption about cordis internals (pinned at 4.0.0-rc.10) that the seam relies
// on. If an upgrade breaks one, the failure says which, before anything downstream misbehaves.

class Probe extends Service {
  constructor(ctx: Context) {
    super(ctx, 'probe')
  }

  caller(): Context {
    return this.ctx
  }
}

declare module 'cordis' {
  interface Context {
    probe: Probe
  }
}

describe('cordis seam assumptions', () => {
  it('symbols.original on a service read through a Context yields the service instance', async () => {
    const ctx = new Context()
    await ctx.plugin(Probe)
    const proxied = ctx.get('probe')!
    const raw = unproxied(proxied)
    expect(raw, 'assumption: traceable proxies answer symbols.original with their target').toBeInstanceOf(Probe)
    expect(raw === proxied, 'assumption: a service read through a Context is a proxy, not the instance').toBe(false)
    expect(unproxied(raw), 'assumption: an instance has no symbols.original of its own').toBe(raw)
  })

  it('events._hooks[name] is the live, ordered listener list ctx.on edits (prepended first)', async () => {
    const ctx = new Context()
    const table = hookTable(ctx)
    const calls: string[] = []
    const first = () => void calls.push('first')
    const second = () => void calls.push('second')
    const dispose = ctx.on('tools/changed', first)
    ctx.on('tools/changed', second, true)
    const hooks = table['tools/changed']
    expect(Array.isArray(hooks), 'assumption: EventsService keeps listeners in _hooks[name] arrays').toBe(true)
    for (const hook of hooks!) hook.callback()
    expect(calls, 'assumption: hooks carry a callable `callback` running the listener, prepended first').toEqual(['second', 'first'])
    expect(listenerCount(ctx, 'tools/changed')).toBe(2)
    dispose()
    expect(listenerCount(ctx, 'tools/changed'), 'assumption: disposing a listener removes it from the live table').toBe(1)
    expect(hookTable(ctx), 'assumption: the table object is stable for the life of the events service').toBe(table)
  })

  it('events.register through a plugin Context adds the bare listener, prepended first, and its fiber disposes it', async () => {
    const ctx = new Context()
    const calls: string[] = []
    let seen: unknown[] = []
    ctx.on('tools/changed', () => void calls.push('on'))
    const fiber = await ctx.plugin({
      name: 'direct',
      apply: (inner: Context) => {
        onDirect(
          inner,
          'tools/changed',
          (...args: unknown[]) => {
            seen = args
            calls.push('direct')
          },
          true,
        )
      },
    })
    const argument = { plain: true }
    for (const hook of hookTable(ctx)['tools/changed']!) hook.callback(argument)
    expect(calls, 'assumption: register adds to _hooks[name], unshifting when prepended').toEqual(['direct', 'on'])
    expect(seen[0], 'assumption: the registered callback is the listener, called with the arguments as given').toBe(argument)
    await fiber.dispose()
    expect(listenerCount(ctx, 'tools/changed'), "assumption: register's effect belongs to the calling plugin's fiber").toBe(1)
  })

  it("tracker.noShadow makes methods read through a Context the instance's own functions", async () => {
    const ctx = new Context()
    await ctx.plugin(Probe)
    const service = unproxied(ctx.get('probe')!)
    expect(typeof (service as any)[symbols.tracker], 'assumption: services carry a tracker object under symbols.tracker').toBe('object')
    skipShadowContexts(service)
    expect(ctx.get('probe')!.caller, 'assumption: with noShadow, a method read through the proxy is the prototype function').toBe(Probe.prototype.caller)
  })

  it('the fast accessor resolves services exactly as cordis does', async () => {
    const ctx = new Context()
    await ctx.plugin(Probe)
    const release = fastServiceAccessor('probe', ['caller'])
    try {
      const raw = unproxied(ctx.get('probe')!)
      let injected: Context | undefined
      let bare: Context | undefined
      await ctx.plugin({ name: 'with-inject', inject: ['probe'], apply: (scoped: Context) => void (injected = scoped) })
      await ctx.plugin({ name: 'without-inject', apply: (scoped: Context) => void (bare = scoped) })
      expect(unproxied(injected!.probe), 'assumption: fibers keep injected services in fiber.store[name].value').toBe(raw)
      expect(injected!.probe, 'assumption: one view per context and service instance').toBe(injected!.probe)
      expect(unproxied(ctx.probe), 'assumption: the reflect service keeps provided services in store[isolate key]').toBe(raw)
      expect(() => bare!.probe, 'assumption: a plugin that did not inject the service cannot read it').toThrow(/cannot get property "probe" without inject/)
      const isolated = ctx.isolate('probe')
      expect(isolated.probe, 'assumption: an isolated context does not see the parent service').toBeUndefined()
      // Context-bound members still go through cordis's tracing proxy for the reading context.
      expect((injected!.probe as unknown as { ctx: Context }).ctx, 'assumption: the tracing proxy answers `ctx` with the reading context').toBe(injected)
    } finally {
      release()
    }
    expect(Object.getOwnPropertyDescriptor(Context.prototype, 'probe'), 'the accessor is removed with its last user').toBeUndefined()
  })

  it('serviceOf resolves what ctx.get resolves, as the instance itself', async () => {
    const ctx = new Context()
    expect(serviceOf(ctx, 'probe'), 'nothing provided yet').toBeUndefined()
    const fiber = await ctx.plugin(Probe)
    const raw = unproxied(ctx.get('probe')!)
    expect(serviceOf(ctx, 'probe'), 'assumption: the reflect service keeps provided services in store[isolate key] as { value }').toBe(raw)
    let scoped: Context | undefined
    await ctx.plugin({ name: 'reader', apply: (inner: Context) => void (scoped = inner) })
    expect(serviceOf(scoped!, 'probe'), 'a plugin context sees the service, as ctx.get does').toBe(raw)
    const isolated = ctx.isolate('probe')
    expect(isolated.get('probe'), 'assumption: an isolated context does not see the parent service').toBeUndefined()
    expect(serviceOf(isolated, 'probe')).toBeUndefined()
    const replacement = await isolated.plugin(Probe)
    expect(serviceOf(isolated, 'probe'), 'an isolated context sees its own provider').toBe(unproxied(isolated.get('probe')!))
    expect(serviceOf(isolated, 'probe')).not.toBe(raw)
    await replacement.dispose()
    await fiber.dispose()
    expect(ctx.get('probe')).toBeUndefined()
    expect(serviceOf(ctx, 'probe'), 'assumption: a disposed provider is absent (its fiber is no longer active)').toBeUndefined()
    expect(serviceOf(isolated, 'probe')).toBeUndefined()
    // A provider loaded again is the one resolved: nothing of the first is cached.
    await ctx.plugin(Probe)
    const reloaded = unproxied(ctx.get('probe')!)
    expect(reloaded).not.toBe(raw)
    expect(serviceOf(ctx, 'probe')).toBe(reloaded)
    expect(serviceOf(scoped!, 'probe')).toBe(reloaded)
  })

  it('the registry installs its accessor while loaded and removes it when unloaded', async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(ToolRegistry)
    expect(Object.getOwnPropertyDescriptor(Context.prototype, 'tools')?.get).toBeTypeOf('function')
    expect(Object.hasOwn(ctx.tools, 'execute'), 'execute is reachable without the per-call inject check').toBe(true)
    await fiber.dispose()
    expect(Object.getOwnPropertyDescriptor(Context.prototype, 'tools')).toBeUndefined()
    expect(ctx.get('tools')).toBeUndefined()
  })
})
