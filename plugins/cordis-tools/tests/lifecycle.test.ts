import { describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { listenerCount } from '@cordage/registry'
import { setup } from './helpers.js'

const PROVIDER = `return { name: 'clock-provider', apply(ctx) { ctx.provide('clock', { now: () => 42 }) } }`
const CONSUMER = `return {
  name: 'clock-consumer',
  inject: ['clock'],
  apply(ctx) {
    ctx.tools.register(defineTool({
      name: 'what_time',
      description: 'Reads the clock.',
      output: { schema: { type: 'number' }, render: (args, value) => [{ type: 'text', text: String(value) }] },
      execute: () => ctx.clock.now(),
    }))
  },
}`

describe('mount lifecycles', () => {
  it('goes pending → active → pending → active as a provider mount comes and goes', async () => {
    const { ctx, value } = await setup()
    expect(await value('cordis_mount', { code: CONSUMER })).toEqual({
      id: 'dyn-1',
      pluginName: 'clock-consumer',
      state: 'pending',
      provides: [],
      waitingFor: ['clock'],
    })
    expect(ctx.tools.get('what_time')).toBeUndefined()
    expect(await value('cordis_mount', { code: PROVIDER })).toMatchObject({ id: 'dyn-2', state: 'active', provides: ['clock'] })
    expect(await value('what_time', {})).toBe(42)
    expect((await value('cordis_inspect', { what: 'temporary' })).temporary.map((mount: any) => [mount.id, mount.state])).toEqual([
      ['dyn-1', 'active'],
      ['dyn-2', 'active'],
    ])
    await value('cordis_unmount', { id: 'dyn-2' })
    expect(ctx.tools.get('what_time')).toBeUndefined()
    expect((await value('cordis_inspect', { what: 'temporary', name: 'dyn-1' })).temporary).toEqual([
      { id: 'dyn-1', pluginName: 'clock-consumer', state: 'pending', provides: [], waitingFor: ['clock'] },
    ])
    await value('cordis_mount', { code: PROVIDER })
    expect(await value('what_time', {})).toBe(42)
  })

  it('a second provider of the same service fails and is rolled back', async () => {
    const { call, value } = await setup()
    await value('cordis_mount', { code: PROVIDER })
    const second = await call('cordis_mount', { code: PROVIDER })
    expect(second.isError).toBe(true)
    expect(contentText(second.content)).toMatch(/service "clock" has been registered/)
    expect((await value('cordis_inspect', { what: 'temporary' })).temporary.map((mount: any) => mount.id)).toEqual(['dyn-1'])
  })

  it('unmounting returns once listeners and timers are gone', async () => {
    const { ctx, value } = await setup()
    let ticks = 0
    ctx.on('tick' as never, (() => void ticks++) as never)
    const baseline = listenerCount(ctx, 'tools/result')
    const code = `return { name: 'ticker', apply(ctx) {
      ctx.on('tools/result', () => {})
      ctx.setInterval(() => ctx.emit('tick'), 5)
    } }`
    await value('cordis_mount', { code })
    expect(listenerCount(ctx, 'tools/result')).toBe(baseline + 1)
    await expect.poll(() => ticks, { timeout: 10_000, interval: 5 }).toBeGreaterThan(0)
    await value('cordis_unmount', { id: 'dyn-1' })
    expect(listenerCount(ctx, 'tools/result')).toBe(baseline)
    // Nothing ticks after: watched for as long as twelve ticks of the 5 ms interval take.
    const after = ticks
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(ticks).toBe(after)
  })

  it('a timeout that fired leaves nothing registered: a chain of timeouts does not pile up in the host', async () => {
    const { ctx, value } = await setup()
    const code = `return { name: 'chain', apply(ctx) {
      let fired = 0
      const tick = () => { if (++fired < 300) ctx.setTimeout(tick, 0) }
      ctx.setTimeout(tick, 0)
      ctx.tools.register(defineTool({ name: 'fired', description: 'f', output: { schema: { type: 'integer' }, render: () => [] }, execute: async () => fired }))
    } }`
    await value('cordis_mount', { code })
    await expect.poll(() => value('fired', {}), { timeout: 20_000, interval: 20 }).toBe(300)
    const fiber = [...ctx.registry.values()].flatMap((runtime) => [...runtime.fibers]).find((candidate) => candidate.name === 'chain')!
    // The activation, the tool and (briefly) the last timeout: not one registration per timeout that fired.
    expect(fiber.getEffects().length).toBeLessThan(10)
  })

  it('console output of mounted code reaches the host log, tagged with the mount id', async () => {
    const { ctx, value } = await setup()
    await value('cordis_mount', { code: 'console.log("hello", { a: 1 }); return () => {}' })
    expect(ctx.logs.map((log) => log.text)).toContain('[cordis:dyn-1] hello {"a":1}')
  })

  it('inspect lists services, the plugin tree, tools and events', async () => {
    const { value } = await setup()
    await value('cordis_mount', { code: PROVIDER })
    const report = await value('cordis_inspect', {})
    expect(report.services).toContainEqual({ name: 'clock', owner: 'clock-provider', state: 'active' })
    expect(report.services.map((service: any) => service.name)).toContain('tools')
    const names = report.plugins.map((plugin: any) => plugin.name)
    expect(names).toEqual(expect.arrayContaining(['cordis-tools', 'cordis-dynamic', 'clock-provider']))
    const dynamic = report.plugins.find((plugin: any) => plugin.name === 'cordis-dynamic')
    expect(report.plugins.find((plugin: any) => plugin.name === 'clock-provider').parent).toBe(dynamic.uid)
    expect(report.tools.map((tool: any) => tool.name)).toEqual(['cordis_inspect', 'cordis_mount', 'cordis_unmount', 'run_code'])
    expect(report.events.find((event: any) => event.name === 'tools/post-execute')).toMatchObject({ mode: 'waterfall' })
  })

  it('unloading the plugin removes every mount and what it registered', async () => {
    const { ctx, fiber, value } = await setup()
    await value('cordis_mount', { code: PROVIDER })
    await value('cordis_mount', { code: CONSUMER })
    expect(ctx.get('clock' as never)).toBeDefined()
    await fiber.dispose()
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['run_code'])
    expect(ctx.get('clock' as never)).toBeUndefined()
  })

  it('unloading code-mode, whose workers run the mounts, removes them and says why', async () => {
    const { ctx, call, value, codeModeFiber } = await setup()
    await value('cordis_mount', { code: PROVIDER })
    await value('cordis_mount', { code: CONSUMER })
    expect(await value('what_time', {})).toBe(42)
    await codeModeFiber.dispose()
    await expect.poll(() => ctx.tools.get('what_time')).toBeUndefined()
    await expect.poll(() => ctx.get('clock' as never)).toBeUndefined()
    const gone = await call('cordis_unmount', { id: 'dyn-1' })
    expect(gone.isError && gone.error.message).toMatch(/^dyn-1 is gone: its sandbox ended: /)
  })
})
