import { getEventListeners } from 'node:events'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { AbortWatch } from '../src/index.js'

describe('AbortWatch', () => {
  it('calls each waiting callback once, in order, through one listener per signal', () => {
    const watch = new AbortWatch()
    const controller = new AbortController()
    const calls: string[] = []
    for (const name of ['a', 'b', 'c']) watch.add(controller.signal, () => calls.push(name))
    const other = new AbortController()
    watch.add(other.signal, () => calls.push('other'))
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    expect(watch.size).toBe(2)
    controller.abort()
    controller.signal.dispatchEvent(new Event('abort'))
    expect(calls).toEqual(['a', 'b', 'c'])
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    expect(watch.size).toBe(1)
  })

  it('does not call a cancelled callback, even one cancelled by a callback before it', () => {
    const watch = new AbortWatch()
    const controller = new AbortController()
    const calls: string[] = []
    const first = watch.add(controller.signal, () => {
      calls.push('first')
      third.cancel()
    })
    const second = watch.add(controller.signal, () => calls.push('second'))
    const third = watch.add(controller.signal, () => calls.push('third'))
    const fourth = watch.add(controller.signal, () => calls.push('fourth'))
    second.cancel()
    second.cancel()
    controller.abort()
    expect(calls).toEqual(['first', 'fourth'])
    first.cancel()
    fourth.cancel()
  })

  it('keeps the listener between waits, so waits that come and go add and remove none', () => {
    const watch = new AbortWatch()
    const signal = new AbortController().signal
    for (let i = 0; i < 100; i++) watch.add(signal, () => {}).cancel()
    expect(getEventListeners(signal, 'abort')).toHaveLength(1)
  })

  it('calls back at once for a signal that has already aborted, adding no listener', () => {
    const watch = new AbortWatch()
    const signal = AbortSignal.abort()
    let called = 0
    watch.add(signal, () => called++).cancel()
    expect(called).toBe(1)
    expect(getEventListeners(signal, 'abort')).toHaveLength(0)
    expect(watch.size).toBe(0)
  })

  it('runs every callback when one throws, and reports the throw', () => {
    const reported: unknown[] = []
    const watch = new AbortWatch((error) => reported.push(error))
    const controller = new AbortController()
    const calls: string[] = []
    watch.add(controller.signal, () => {
      throw new Error('boom')
    })
    watch.add(controller.signal, () => calls.push('after'))
    controller.abort()
    expect(calls).toEqual(['after'])
    expect(reported.map((error) => (error as Error).message)).toEqual(['boom'])
  })

  it('close takes an idle listener off at once and a busy one when its last wait ends; an abort still reaches a wait in flight', () => {
    const watch = new AbortWatch()
    const [idle, aborted, cancelled, later] = [new AbortController(), new AbortController(), new AbortController(), new AbortController()]
    const calls: string[] = []
    watch.add(idle.signal, () => calls.push('idle')).cancel()
    watch.add(aborted.signal, () => calls.push('aborted'))
    const pending = watch.add(cancelled.signal, () => calls.push('cancelled'))
    watch.close()
    expect(getEventListeners(idle.signal, 'abort')).toHaveLength(0)
    expect(getEventListeners(aborted.signal, 'abort')).toHaveLength(1)
    expect(getEventListeners(cancelled.signal, 'abort')).toHaveLength(1)
    aborted.abort()
    pending.cancel()
    expect(getEventListeners(aborted.signal, 'abort')).toHaveLength(0)
    expect(getEventListeners(cancelled.signal, 'abort')).toHaveLength(0)
    // A wait added after close holds its listener only while it waits.
    const wait = watch.add(later.signal, () => calls.push('later'))
    expect(getEventListeners(later.signal, 'abort')).toHaveLength(1)
    wait.cancel()
    expect(getEventListeners(later.signal, 'abort')).toHaveLength(0)
    for (const controller of [idle, cancelled, later]) controller.abort()
    expect(calls).toEqual(['aborted'])
    expect(watch.size).toBe(0)
  })

  it('holds the signals it watches weakly: a collected signal leaves nothing behind', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const watch = new AbortWatch()
    ;(() => {
      for (let i = 0; i < 10; i++) watch.add(new AbortController().signal, () => {})
    })()
    const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    // Finalization runs after a collection, on a later task. `size` derefs the signals, which keeps them
    // alive to the end of that task, so each collection runs in a task of its own.
    for (let attempt = 0; attempt < 100; attempt++) {
      await tick(0)
      gc()
      await tick(10)
      if (watch.size === 0) break
    }
    expect(watch.size).toBe(0)
    expect((watch as unknown as { attached: Set<unknown> }).attached.size).toBe(0)
  })
})
