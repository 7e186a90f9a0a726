import { getEventListeners, getMaxListeners, setMaxListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import type { ToolExecutionResult } from '@cordage/core'
import { Context } from 'cordis'
import { ToolRegistry } from '../src/index.js'
import { createTestContext } from '@cordage/testing'
import { echo, rawTool, sleep } from './helpers.js'

function code(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined
}

/** A body that resolves after `ms` or rejects promptly when its signal aborts. */
function cooperative(ms: number, onAbort?: () => void) {
  return (_args: unknown, exec: { signal: AbortSignal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ done: true }), ms)
      exec.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer)
          onAbort?.()
          reject(exec.signal.reason)
        },
        { once: true },
      )
    })
}

describe('cancellation and timeouts', () => {
  it('waits on a signal with one listener however many calls are in flight, and takes it off when the registry unloads', async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(ToolRegistry)
    ctx.tools.register(rawTool('slow', async () => (await sleep(30), { done: true })))
    ctx.tools.register(rawTool('timed', async () => (await sleep(30), { done: true }), { timeoutMs: 5_000 }))
    const warnings: string[] = []
    const onWarning = (warning: Error) => void warnings.push(warning.message)
    process.on('warning', onWarning)
    const shared = new AbortController().signal
    const owned = new AbortController().signal
    setMaxListeners(50, owned)
    // An owner's 0 means "no limit" (Node 20's getMaxListeners throws for it): calls must not fail.
    const unlimited = new AbortController().signal
    setMaxListeners(0, unlimited)
    try {
      for (const signal of [shared, owned, unlimited]) {
        for (let batch = 0; batch < 2; batch++) {
          const calls = Array.from({ length: 24 }, (_, index) => ctx.tools.execute({ name: index % 2 ? 'slow' : 'timed', arguments: {}, signal }))
          expect(getEventListeners(signal, 'abort')).toHaveLength(1)
          for (const result of await Promise.all(calls)) expect(result.isError).toBe(false)
          // Kept for the next call under this signal (it goes when the signal is collected or aborts).
          expect(getEventListeners(signal, 'abort')).toHaveLength(1)
        }
      }
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).toEqual([])
    expect(getMaxListeners(owned), "an owner's own threshold is kept").toBe(50)
    await fiber.dispose()
    for (const signal of [shared, owned, unlimited]) expect(getEventListeners(signal, 'abort')).toHaveLength(0)
  })

  it('still abandons a call in flight after the registry unloads, when its caller aborts, then leaves no listener', async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(ToolRegistry, { timeoutGraceMs: 50 })
    let entered!: () => void
    const inBody = new Promise<void>((resolve) => (entered = resolve))
    ctx.tools.register(rawTool('deaf', () => (entered(), new Promise(() => {}))))
    const idle = new AbortController()
    const caller = new AbortController()
    ctx.tools.register(rawTool('quick', async () => ({ done: true })))
    await ctx.tools.execute({ name: 'quick', arguments: {}, signal: idle.signal })
    const call = ctx.tools.execute({ name: 'deaf', arguments: {}, signal: caller.signal })
    await inBody
    await fiber.dispose()
    expect(getEventListeners(idle.signal, 'abort'), 'a signal nothing waits on loses its listener at unload').toHaveLength(0)
    expect(getEventListeners(caller.signal, 'abort'), 'the call in flight still waits on its signal').toHaveLength(1)
    caller.abort()
    expect(code(await call)).toBe('ABORTED')
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0)
  })

  it('stops every call in flight under a signal through its one listener', async () => {
    const ctx = await createTestContext({ registry: { timeoutGraceMs: 50 }, print: false })
    let stopped = 0
    let entered = 0
    const waiting = cooperative(10_000, () => stopped++)
    ctx.tools.register(rawTool('wait', (args, exec) => (entered++, waiting(args, exec))))
    ctx.tools.register(rawTool('deaf', () => (entered++, new Promise(() => {})), { timeoutMs: 60_000 }))
    const controller = new AbortController()
    const calls = Array.from({ length: 12 }, (_, index) => ctx.tools.execute({ name: index % 3 ? 'wait' : 'deaf', arguments: {}, signal: controller.signal }))
    // Aborted once every body runs.
    await expect.poll(() => entered, { timeout: 15_000, interval: 1 }).toBe(12)
    controller.abort()
    const results = await Promise.all(calls)
    expect(results.map(code)).toEqual(Array.from({ length: 12 }, () => 'ABORTED'))
    expect(stopped).toBe(8)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('fails a pre-aborted call with ABORTED_BEFORE_DISPATCH without running the body', async () => {
    const ctx = await createTestContext()
    let ran = false
    ctx.tools.register(
      rawTool('work', () => {
        ran = true
        return 1
      }),
    )
    const result = await ctx.tools.execute({ name: 'work', arguments: {}, signal: AbortSignal.abort() })
    expect(code(result)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(ran).toBe(false)
  })

  it('fails a call aborted while awaiting approval with ABORTED_BEFORE_DISPATCH', async () => {
    const ctx = await createTestContext()
    let ran = false
    ctx.tools.register(
      rawTool('work', () => {
        ran = true
        return 1
      }),
    )
    const controller = new AbortController()
    ctx.on('tools/pre-execute', async (_exec, next) => {
      controller.abort()
      return next()
    })
    const result = await ctx.tools.execute({ name: 'work', arguments: {}, signal: controller.signal })
    expect(code(result)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(ran).toBe(false)
  })

  it('fails a call aborted during the body with ABORTED, after the body settles', async () => {
    const ctx = await createTestContext()
    let stopped = false
    ctx.tools.register(
      rawTool(
        'work',
        cooperative(5_000, () => {
          stopped = true
        }),
      ),
    )
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 20)
    const result = await ctx.tools.execute({ name: 'work', arguments: {}, signal: controller.signal })
    expect(code(result)).toBe('ABORTED')
    expect(stopped).toBe(true)
  })

  it('replaces a success that lands after the abort with ABORTED', async () => {
    const ctx = await createTestContext()
    const controller = new AbortController()
    ctx.tools.register(
      rawTool('work', async () => {
        controller.abort()
        return 1
      }),
    )
    expect(code(await ctx.tools.execute({ name: 'work', arguments: {}, signal: controller.signal }))).toBe('ABORTED')
  })

  it('keeps more specific outcomes over cancellation: denials and tool failures win', async () => {
    const ctx = await createTestContext()
    const controller = new AbortController()
    ctx.tools.register(
      rawTool('fails', async () => {
        controller.abort()
        throw new Error('tool broke')
      }),
    )
    const failed = await ctx.tools.execute({ name: 'fails', arguments: {}, signal: controller.signal })
    expect(failed.isError && failed.error.message).toBe('tool broke')
    ctx.tools.register(echo)
    const second = new AbortController()
    ctx.on('tools/pre-execute', async () => {
      second.abort()
      return { kind: 'deny', reason: 'nope' }
    })
    expect(code(await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' }, signal: second.signal }))).toBe('DENIED')
  })

  it('enforces timeoutMs on a cooperative body: the signal aborts and the result is TOOL_TIMEOUT', async () => {
    const ctx = await createTestContext()
    let aborted = false
    ctx.tools.register(
      rawTool(
        'slow',
        cooperative(5_000, () => {
          aborted = true
        }),
        { timeoutMs: 30 },
      ),
    )
    const result = await ctx.tools.execute({ name: 'slow', arguments: {} })
    expect(code(result)).toBe('TOOL_TIMEOUT')
    expect(result.isError && result.error.message).toBe('the tool did not finish within 30 ms')
    // The body settled through its signal, not its own 5 s timer.
    expect(aborted).toBe(true)
  })

  it('gives up on a body that ignores its signal after the grace period, with a warning', async () => {
    const ctx = await createTestContext({ registry: { timeoutGraceMs: 50 }, print: false })
    let settled = false
    ctx.tools.register(rawTool('stubborn', () => sleep(3_000).then(() => ((settled = true), 1)), { timeoutMs: 20 }))
    const result = await ctx.tools.execute({ name: 'stubborn', arguments: {} })
    expect(code(result)).toBe('TOOL_TIMEOUT')
    // Answered while the body still ran: the registry did not wait for it.
    expect(settled).toBe(false)
    expect(ctx.logs.some((log) => log.type === 'warn' && log.text.includes('did not settle within 50 ms'))).toBe(true)
  })

  it('reports TOOL_TIMEOUT even when the body returns a value after its deadline', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(
      rawTool(
        'late',
        async () => {
          await sleep(40)
          return 1
        },
        { timeoutMs: 10 },
      ),
    )
    expect(code(await ctx.tools.execute({ name: 'late', arguments: {} }))).toBe('TOOL_TIMEOUT')
  })

  it('forwards the caller abort to the body of a tool with a timeout', async () => {
    const ctx = await createTestContext()
    let aborted = false
    ctx.tools.register(
      rawTool(
        'slow',
        cooperative(5_000, () => {
          aborted = true
        }),
        { timeoutMs: 10_000 },
      ),
    )
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 20)
    expect(code(await ctx.tools.execute({ name: 'slow', arguments: {}, signal: controller.signal }))).toBe('ABORTED')
    expect(aborted).toBe(true)
  })
})
