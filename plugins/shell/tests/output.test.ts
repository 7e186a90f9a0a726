import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { setup, value } from './helpers.js'

describe('bounded output', () => {
  it('200 MiB of stdout keeps head and tail within the bound without buffering it all', async () => {
    const { bash } = await setup({ config: { maxOutputBytes: 30_000 } })
    // Collect garbage while sampling, so the peak reflects what the capture holds, not GC timing.
    setFlagsFromString('--expose_gc')
    const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void
    gc()
    const before = process.memoryUsage()
    let peak = before.rss
    let peakBuffers = before.arrayBuffers
    const sampler = setInterval(() => {
      // A scavenge frees dead stream chunks (young objects) cheaply.
      gc({ type: 'minor' })
      const usage = process.memoryUsage()
      peak = Math.max(peak, usage.rss)
      peakBuffers = Math.max(peakBuffers, usage.arrayBuffers)
    }, 10)
    const total = 200 * 1024 * 1024
    const result = await bash({ command: `head -c ${total} /dev/zero | tr '\\0' a; echo; echo the-end` })
    clearInterval(sampler)
    const growth = peak - before.rss
    const buffers = peakBuffers - before.arrayBuffers
    const stdout = value(result).stdout as string
    expect(value(result).exitCode).toBe(0)
    expect(Buffer.byteLength(stdout)).toBeLessThanOrEqual(30_000 + 100)
    expect(stdout.startsWith('a'.repeat(10_000))).toBe(true)
    expect(stdout.endsWith('a\nthe-end\n')).toBe(true)
    const omitted = total + '\nthe-end\n'.length - 30_000
    expect(value(result).omittedBytes).toEqual({ stdout: omitted, stderr: 0 })
    expect(stdout).toContain(`\n[… ${omitted} bytes omitted …]\n`)
    expect(value(result).fullOutput).toEqual({ stdout: { path: null, bytes: 0, note: 'not kept: the spill plugin is not loaded' }, stderr: null })
    expect(contentText(result.content)).toContain(`\n[${omitted} bytes of stdout left out; the whole stdout was not kept: the spill plugin is not loaded]`)
    expect(Buffer.byteLength(contentText(result.content))).toBeLessThanOrEqual(30_200)
    console.info(
      `200 MiB run: peak growth rss ${(growth / 1048576).toFixed(1)} MiB, buffers ${(buffers / 1048576).toFixed(1)} MiB; captured ${Buffer.byteLength(stdout)} bytes`,
    )
    // Holding the whole output would cost at least 200 MiB of buffers. What is measured instead is what a fast
    // pipe delivers between two samples before a scavenge frees it: 3-12 MiB, more on a faster machine, so the
    // bounds sit far from both.
    expect(growth).toBeLessThan(64 * 1024 * 1024)
    expect(buffers).toBeLessThan(64 * 1024 * 1024)
  })
})
