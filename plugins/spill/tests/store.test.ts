import { existsSync, readdirSync } from 'node:fs'
import { mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { listenerCount } from '@cordage/registry'
import { createTestContext } from '@cordage/testing'
import { Spill } from '../src/index.js'
import { SpillStore } from '../src/store.js'
import { listFiles, repeatTool, tempDir, toolsPlugin } from './helpers.js'

const openFds = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0)

describe('SpillStore', () => {
  it('never overwrites: the same names get distinct files', async () => {
    const dir = join(await tempDir(), 'spill')
    const store = new SpillStore(dir)
    const first = await store.save({ toolName: 'grep', callId: 'c1', suggestedName: 'matches.txt', text: 'one' })
    const second = await store.save({ toolName: 'grep', callId: 'c1', suggestedName: 'matches.txt', text: 'two' })
    expect(first.path).toBe(join(dir, 'grep-c1-matches.txt'))
    expect(second.path).toBe(join(dir, 'grep-c1-matches-2.txt'))
    expect(await readFile(first.path, 'utf8')).toBe('one')
    expect(await readFile(second.path, 'utf8')).toBe('two')
    expect(first.bytes).toBe(3)
  })

  it('writes multi-byte text across many chunks byte for byte', async () => {
    const dir = join(await tempDir(), 'spill')
    const text = 'a😀€\n'.repeat(1_500_000)
    const saved = await new SpillStore(dir).save({ toolName: 't', callId: 'c', text })
    expect(saved.bytes).toBe(Buffer.byteLength(text))
    expect(await readFile(saved.path, 'utf8')).toBe(text)
  })

  it('open: appends in order to a new private file, and stops writing once the store closes', async () => {
    const dir = join(await tempDir(), 'spill')
    const store = new SpillStore(dir)
    const writer = await store.open({ toolName: 'bash', callId: 'c1', suggestedName: 'stdout.txt' })
    expect(writer.path).toBe(join(dir, 'bash-c1-stdout.txt'))
    expect((await stat(writer.path)).mode & 0o777).toBe(0o600)
    await Promise.all([writer.write(Buffer.from('one ')), writer.write(Buffer.from('two ')), writer.write(new Uint8Array([0x74, 0x68, 0x72, 0x65, 0x65]))])
    expect(await writer.close()).toEqual({ path: writer.path, bytes: 13 })
    expect(await readFile(writer.path, 'utf8')).toBe('one two three')
    const open = await store.open({ toolName: 'bash', callId: 'c2' })
    await open.write(Buffer.from('kept'))
    await store.close()
    await expect(open.write(Buffer.from('late'))).rejects.toMatchObject({ code: 'SPILL_FAILED' })
    expect(await readFile(open.path, 'utf8')).toBe('kept')
    await expect(store.open({ toolName: 'bash', callId: 'c3' })).rejects.toMatchObject({ code: 'SPILL_FAILED' })
    expect(store.written).toEqual([writer.path, open.path])
  })

  it('sanitises names so nothing escapes the directory', async () => {
    const dir = join(await tempDir(), 'spill')
    const saved = await new SpillStore(dir).save({ toolName: '../../x', callId: 'a/b', suggestedName: '../../../etc/passwd', text: 'ok' })
    expect(saved.path.startsWith(dir + '/')).toBe(true)
    expect(await listFiles(dir)).toEqual(['x-a_b-etc_passwd.txt'])
  })

  it('does not follow a symlink planted at the target name', async () => {
    const dir = join(await tempDir(), 'spill')
    await mkdir(dir, { mode: 0o700 })
    const victim = join(await tempDir(), 'victim.txt')
    await writeFile(victim, 'precious')
    await symlink(victim, join(dir, 'bash-c1-output.txt'))
    const saved = await new SpillStore(dir).save({ toolName: 'bash', callId: 'c1', text: 'spilled' })
    expect(saved.path).toBe(join(dir, 'bash-c1-output-2.txt'))
    expect(await readFile(victim, 'utf8')).toBe('precious')
    expect(await readlink(join(dir, 'bash-c1-output.txt'))).toBe(victim)
  })

  it('refuses a symlinked spill directory', async () => {
    const real = await tempDir()
    const link = join(await tempDir(), 'spill')
    await symlink(real, link)
    await expect(new SpillStore(link).save({ toolName: 't', callId: 'c', text: 'x' })).rejects.toMatchObject({
      code: 'SPILL_FAILED',
      message: expect.stringContaining('symlink'),
    })
    expect(await listFiles(real)).toEqual([])
  })

  it('tightens an existing group/world-readable directory to 0700', async () => {
    const dir = join(await tempDir(), 'spill')
    await mkdir(dir, { mode: 0o755 })
    await new SpillStore(dir).save({ toolName: 't', callId: 'c', text: 'x' })
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
  })

  it('stops an in-flight save on close, deletes the partial file and leaks no descriptor', async () => {
    const dir = join(await tempDir(), 'spill')
    const store = new SpillStore(dir)
    await store.save({ toolName: 'warm', callId: 'up', text: 'x' })
    const before = openFds()
    const saving = store.save({ toolName: 'big', callId: 'c', text: 'y'.repeat(64 * 1024 * 1024) })
    await new Promise((resolve) => setImmediate(resolve))
    await store.close()
    await expect(saving).rejects.toMatchObject({ code: 'SPILL_FAILED' })
    expect(await listFiles(dir)).toEqual(['warm-up-output.txt'])
    expect(openFds()).toBeLessThanOrEqual(before)
    await expect(store.save({ toolName: 't', callId: 'c', text: 'x' })).rejects.toThrow(/closed/)
  })
})

describe('spill plugin lifecycle', () => {
  it('load → behave → dispose: listener and service gone, files kept by default', async () => {
    const dir = join(await tempDir(), 'spill')
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(toolsPlugin(repeatTool()))
    const hooks = () => listenerCount(ctx, 'tools/present')
    const fiber = await ctx.plugin(Spill, { dir, maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 })
    expect(hooks()).toBe(1)
    expect(ctx.get('spill')).toBeDefined()
    await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'x', count: 5_000 } })
    expect(await listFiles(dir)).toHaveLength(1)
    await fiber.dispose()
    expect(hooks()).toBe(0)
    expect(ctx.get('spill')).toBeUndefined()
    // Spill files are referenced by the persisted session: they outlive the plugin by default.
    expect(await listFiles(dir)).toHaveLength(1)
    const after = await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'x', count: 5_000 } })
    expect(after.content).toEqual([{ type: 'text', text: 'x'.repeat(5_000) }])
  })

  it('unloading while a writer is being opened refuses it, leaving no file and no descriptor behind', async () => {
    const dir = join(await tempDir(), 'spill')
    const ctx = await createTestContext({ print: false })
    const fiber = await ctx.plugin(Spill, { dir })
    const before = openFds()
    // The directory is made and the file created while the unload runs.
    const refused = expect(ctx.spill.open!({ toolName: 'bash', callId: 'call_1', suggestedName: 'stdout.txt' })).rejects.toMatchObject({ code: 'SPILL_FAILED' })
    await fiber.dispose()
    expect(await listFiles(dir)).toEqual([])
    await refused
    expect(openFds()).toBeLessThanOrEqual(before)
  })

  it('deleteOnDispose removes the files this instance wrote, and only those', async () => {
    const dir = join(await tempDir(), 'spill')
    await mkdir(dir, { mode: 0o700 })
    await writeFile(join(dir, 'someone-else.txt'), 'keep')
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(toolsPlugin(repeatTool()))
    const fiber = await ctx.plugin(Spill, { dir, maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500, deleteOnDispose: true })
    await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'x', count: 5_000 } })
    await ctx.spill.save({ toolName: 'direct', callId: 'c', text: 'y' })
    expect(await listFiles(dir)).toHaveLength(3)
    await fiber.dispose()
    expect(await listFiles(dir)).toEqual(['someone-else.txt'])
  })
})
