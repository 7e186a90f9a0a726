import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { Spill } from '@cordage/plugin-spill'
import { setup, tempDir, value } from './helpers.js'

/** A shell context with the spill service writing into a fresh directory. */
async function withSpill(config: Parameters<typeof setup>[0] = {}) {
  const spillDir = join(tempDir(), 'spill')
  const context = await setup(config)
  await context.ctx.plugin(Spill, { dir: spillDir })
  return { ...context, spillDir }
}

/** What `seq 1 <count>` prints. */
const seq = (count: number) => `${Array.from({ length: count }, (_, index) => index + 1).join('\n')}\n`

describe('streams longer than the value keeps', () => {
  it('go whole into a private spill file, named in the value and in the text', async () => {
    const { bash, spillDir } = await withSpill({ config: { maxOutputBytes: 3_000 } })
    const result = await bash({ command: 'seq 1 200000' })
    const foreground = value(result)
    const expected = seq(200_000)
    const file = foreground.fullOutput.stdout
    expect(file).toEqual({ path: expect.stringMatching(new RegExp(`^${spillDir}/bash-.*stdout.*\\.txt$`)), bytes: expected.length, note: null })
    expect(readFileSync(file.path, 'utf8')).toBe(expected)
    expect(statSync(file.path).mode & 0o777).toBe(0o600)
    expect(foreground.fullOutput.stderr).toBeNull()
    expect(foreground.omittedBytes.stdout).toBe(expected.length - 3_000)
    expect(contentText(result.content).split('\n').at(-1)).toBe(
      `[${foreground.omittedBytes.stdout} bytes of stdout left out; whole stdout: ${file.path} (read it with read offset/limit or grep)]`,
    )
  })

  it('keeps each stream in its own file, stderr labelled in the text', async () => {
    const { bash } = await withSpill({ config: { maxOutputBytes: 3_000 } })
    const result = await bash({ command: 'seq 1 50000; seq 50001 100000 >&2; exit 2' })
    const { fullOutput } = value(result)
    expect(readFileSync(fullOutput.stdout.path, 'utf8')).toBe(seq(50_000))
    expect(readFileSync(fullOutput.stderr.path, 'utf8')).toBe(seq(100_000).slice(seq(50_000).length))
    const lines = contentText(result.content).split('\n')
    expect(lines.indexOf('[stderr]')).toBeGreaterThan(lines.findIndex((line) => line.startsWith('[') && line.includes('bytes of stdout left out')))
    expect(lines.at(-2)).toMatch(/^\[\d+ bytes of stderr left out; whole stderr: .*stderr.*\.txt \(read it with read offset\/limit or grep\)\]$/)
    expect(lines.at(-1)).toBe('Exit code 2')
  })

  it('stops the file at maxSpillBytes and says so', async () => {
    const { bash } = await withSpill({ config: { maxOutputBytes: 3_000, maxSpillBytes: 100_000 } })
    const result = await bash({ command: 'seq 1 200000' })
    const file = value(result).fullOutput.stdout
    const total = seq(200_000)
    expect(file).toMatchObject({ bytes: 100_000, note: `the first 100000 of ${total.length} bytes` })
    expect(readFileSync(file.path, 'utf8')).toBe(total.slice(0, 100_000))
    expect(contentText(result.content)).toContain(`whole stdout (the first 100000 of ${total.length} bytes): ${file.path}`)
  })

  it('a spill directory that cannot be used keeps the head and tail and says why (spill fails open)', async () => {
    const blocked = join(tempDir(), 'not-a-directory')
    writeFileSync(blocked, 'a file where the spill directory should be')
    const context = await setup({ config: { maxOutputBytes: 3_000 } })
    await context.ctx.plugin(Spill, { dir: join(blocked, 'spill') })
    const result = await context.bash({ command: 'seq 1 200000' })
    const foreground = value(result)
    expect(foreground.exitCode).toBe(0)
    expect(foreground.fullOutput.stdout).toMatchObject({ path: null, bytes: 0, note: expect.stringMatching(/^writing it failed: .*ENOTDIR/) })
    expect(foreground.stdout.endsWith('199999\n200000\n')).toBe(true)
    expect(context.ctx.logs.some((log) => log.type === 'warn' && log.text.includes('could not keep the whole stdout in a spill file'))).toBe(true)
  })

  it('leaves short output alone: no file, no extra line', async () => {
    const { bash, spillDir } = await withSpill()
    const result = await bash({ command: 'echo short; echo err >&2' })
    expect(value(result).fullOutput).toEqual({ stdout: null, stderr: null })
    expect(contentText(result.content)).toBe('short\n[stderr]\nerr')
    expect(() => readFileSync(join(spillDir, 'x'))).toThrow()
  })
})

describe('StreamRecorder back-pressure', () => {
  it('asks the reader to wait while the file falls behind, and loses nothing', async () => {
    const { StreamRecorder } = await import('../src/record.js')
    // A spill service whose disk takes a while per write: what the recorder must not outrun.
    const received: Buffer[] = []
    let inFlight = 0
    let mostInFlight = 0
    const slowSpill = {
      dir: '/nowhere',
      save: () => Promise.reject(new Error('unused')),
      open: async () => ({
        path: '/nowhere/stdout.txt',
        write: async (chunk: Uint8Array) => {
          inFlight += chunk.length
          mostInFlight = Math.max(mostInFlight, inFlight)
          await new Promise((resolve) => setTimeout(resolve, 1))
          received.push(Buffer.from(chunk))
          inFlight -= chunk.length
        },
        close: async () => ({ path: '/nowhere/stdout.txt', bytes: received.reduce((sum, chunk) => sum + chunk.length, 0) }),
      }),
    }
    const recorder = new StreamRecorder({
      stream: 'stdout',
      headBytes: 100,
      tailBytes: 200,
      maxSpillBytes: 1 << 30,
      spill: slowSpill,
      toolName: 'bash',
      callId: 'c1',
      warn: () => {},
    })
    const chunks = Array.from({ length: 320 }, (_, index) => Buffer.alloc(64 << 10, index % 251))
    let waits = 0
    for (const chunk of chunks) {
      const wait = recorder.push(chunk)
      if (wait) {
        waits++
        await wait
      }
    }
    const file = await recorder.finish()
    expect(waits).toBeGreaterThan(0)
    expect(mostInFlight).toBeLessThanOrEqual((4 << 20) + (64 << 10))
    expect(file).toEqual({ path: '/nowhere/stdout.txt', bytes: 320 * (64 << 10), note: null })
    expect(Buffer.concat(received).equals(Buffer.concat(chunks))).toBe(true)
  })
})
