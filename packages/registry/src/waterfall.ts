import type { Hook } from './cordis-seam.js'

/**
 * Runs `hooks` as a cordis waterfall — registration order, prepended first, each listener gets the
 * arguments plus `next` — without the events service's per-dispatch bookkeeping, which costs more
 * than the listeners themselves on the dispatch path. Hooks are snapshotted like cordis does.
 */
export function waterfall<T>(hooks: readonly Hook[], first: unknown, second: unknown, inner: () => T): T {
  const callbacks = hooks.slice()
  const twoArgs = second !== undefined
  let index = 0
  const dispatch = (): T => {
    if (index === callbacks.length) return inner()
    const callback = callbacks[index++].callback
    let called = false
    const next = () => {
      if (called) throw new Error('next() called multiple times')
      called = true
      return dispatch()
    }
    return twoArgs ? callback(first, second, next) : callback(first, next)
  }
  return dispatch()
}
