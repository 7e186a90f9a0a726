import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { open, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { codeOf, loadFs, tempDir, textOf, valueOf } from './helpers.js'

const LINES = 1_000_000
const CHANGING_LINES = 50_000
const PAYLOAD = 'payload '.repeat(11)
const HOUR_AGO = new Date(Date.now() - 3_600_000)
let root: string
let path: string

/** Bytes this process has read so far (every thread), from /proc: how much of a file a call read. */
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1])
/** Lines `from`..`from + count - 1` of the file as tail and head see them. */
const tail = (file: string, from: number, count: number) =>
  spawnSync('sh', ['-c', `tail -n +${from} '${file}' | head -n ${count}`], { encoding: 'utf8' })
    .stdout.replace(/\n$/, '')
    .split('\n')

beforeAll(async () => {
  root = await tempDir()
  path = join(root, 'huge.log')
  const handle = await open(path, 'w')
  const block = Array.from({ length: 10_000 }, (_, i) => `entry ${String(i).padStart(5, '0')} ${PAYLOAD}`).join('\n') + '\n'
  for (let i = 0; i < LINES / 10_000; i++) await handle.write(block)
  await handle.close()
  // The first 50 000 lines (5 MB): enough chunks for an index.
  await writeFile(join(root, 'changing.log'), readFileSync(path).subarray(0, 101 * CHANGING_LINES))
  const counted = Number(spawnSync('wc', ['-l', path], { encoding: 'utf8' }).stdout.trim().split(' ')[0])
  if (counted !== LINES) throw new Error(`the fixture has ${counted} lines, not ${LINES}`)
  // A file's line index is kept only once the version it was counted from had settled for 2 s before the
  // count (mtime and ctime; a ctime cannot be set back, so this waits).
  for (const file of [path, join(root, 'changing.log')]) await utimes(file, HOUR_AGO, HOUR_AGO)
  const settledAt = (await stat(join(root, 'changing.log'))).ctimeMs + 2_100
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, settledAt - Date.now())))
}, 30_000)

describe('read of a 100 MB file', () => {
  it('reads near the end by streaming, without holding the file in memory', async () => {
    const { call } = await loadFs(root)
    const before = process.memoryUsage()
    let peak = 0
    const sampler = setInterval(() => {
      const usage = process.memoryUsage()
      peak = Math.max(peak, usage.heapUsed + usage.arrayBuffers - before.heapUsed - before.arrayBuffers)
    }, 1)
    const value = valueOf(await call('read', { path: 'huge.log', offset: 999_990, limit: 5 }))
    clearInterval(sampler)
    expect(value.totalLines).toBe(LINES)
    expect(value.lines.map((line: any) => line.number)).toEqual([999_990, 999_991, 999_992, 999_993, 999_994])
    expect(value.lines[0].text).toBe(`entry 09989 ${PAYLOAD}`)
    expect(value.lines.map((line: any) => line.text)).toEqual(tail(path, 999_990, 5))
    // The file is 100 MB; a streaming read stays within a few buffers.
    expect(peak).toBeLessThan(40 * 1024 * 1024)
  })

  it('pages an unchanged file again from its line index: only the chunks around the window are read', async () => {
    const { call } = await loadFs(root)
    valueOf(await call('read', { path: 'huge.log', offset: 2, limit: 1 }))
    // Windows that start just before, at and after chunk boundaries (1 MiB is about line 10 383), and near the end.
    for (const offset of [10_382, 10_383, 10_384, 500_000, 999_000]) {
      const read = bytesRead()
      const value = valueOf(await call('read', { path: 'huge.log', offset, limit: 3 }))
      expect(bytesRead() - read, `offset ${offset}`).toBeLessThan(8 << 20)
      expect(value.totalLines).toBe(LINES)
      expect(value.lines.map((line: any) => [line.number, line.text])).toEqual(tail(path, offset, 3).map((text, index) => [offset + index, text]))
    }
  })

  it('reads the last lines with a negative offset, numbered as in the file', async () => {
    const { call } = await loadFs(root)
    const result = await call('read', { path: 'huge.log', offset: -3 })
    expect(valueOf(result)).toEqual({
      path: 'huge.log',
      offset: 999_998,
      lines: [999_998, 999_999, 1_000_000].map((number) => ({ number, text: `entry ${String((number - 1) % 10_000).padStart(5, '0')} ${PAYLOAD}` })),
      totalLines: LINES,
    })
    const read = bytesRead()
    expect(valueOf(await call('read', { path: 'huge.log', offset: -1000, limit: 2 })).lines.map((line: any) => line.number)).toEqual([999_001, 999_002])
    expect(bytesRead() - read).toBeLessThan(8 << 20)
  })

  it('never pages a changed file with an old index, even when its size and mtime are put back', async () => {
    const copy = join(root, 'changing.log')
    const { call } = await loadFs(root)
    expect(valueOf(await call('read', { path: 'changing.log', offset: -1 })).lines[0].number).toBe(CHANGING_LINES)
    // Indexed: a second read near the end does not count the file again.
    const read = bytesRead()
    valueOf(await call('read', { path: 'changing.log', offset: 49_000, limit: 1 }))
    expect(bytesRead() - read).toBeLessThan(3 << 20)
    // Two lines merged into one (the size stays, the line count drops by one), mtime restored.
    const handle = await open(copy, 'r+')
    await handle.write(' ', 101 * 5 + 100)
    await handle.close()
    await utimes(copy, HOUR_AGO, HOUR_AGO)
    const value = valueOf(await call('read', { path: 'changing.log', offset: 49_000, limit: 1 }))
    expect(value.totalLines).toBe(CHANGING_LINES - 1)
    expect(value.lines[0].text).toBe(tail(copy, 49_000, 1)[0])
  })
})

describe('negative offsets', () => {
  it('count back from the end of small files, clamp at the first line, and 0 is refused', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'n.txt'), Array.from({ length: 10 }, (_, i) => `row ${i + 1}`).join('\n'))
    await writeFile(join(dir, 'dos.txt'), 'one\r\ntwo\r\nthree\r\n')
    await writeFile(join(dir, 'empty.txt'), '')
    const { call } = await loadFs(dir)
    const last = await call('read', { path: 'n.txt', offset: -2 })
    expect(valueOf(last)).toEqual({
      path: 'n.txt',
      offset: 9,
      lines: [
        { number: 9, text: 'row 9' },
        { number: 10, text: 'row 10' },
      ],
      totalLines: 10,
    })
    expect(valueOf(await call('read', { path: 'n.txt', offset: -100, limit: 2 })).lines.map((line: any) => line.number)).toEqual([1, 2])
    expect(valueOf(await call('read', { path: 'dos.txt', offset: -1 })).lines).toEqual([{ number: 3, text: 'three' }])
    expect(textOf(await call('read', { path: 'empty.txt', offset: -5 }))).toBe('(empty.txt is empty)')
    const zero = await call('read', { path: 'n.txt', offset: 0 })
    expect(codeOf(zero)).toBe('OFFSET_OUT_OF_RANGE')
    expect(textOf(zero)).toBe('Error: offset 0 is not a line: lines are numbered from 1, and a negative offset counts back from the end')
  })
})
