import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Service, type Context } from 'cordis'
import { afterAll } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as fs from '../src/index.js'

const temps: string[] = []
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A fresh real temporary directory (removed after the file's tests). */
export async function tempDir(prefix = 'cordage-fs-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)))
  temps.push(dir)
  return dir
}

/** Writes a tree of files: `{ 'a/b.txt': 'text' }`. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true })
    await writeFile(join(root, path), content)
  }
}

/**
 * A test-only `spill` service with the interface of the spill plugin's store: it writes each saved
 * text to a real file in `dir` and keeps a record of the calls.
 */
export class TestSpill extends Service {
  readonly saved: Array<{ toolName: string; callId: string; path: string; text: string }> = []

  constructor(
    ctx: Context,
    readonly config: { dir: string },
  ) {
    super(ctx, 'spill')
  }

  async save(input: { toolName: string; callId: string; suggestedName: string; text: string }): Promise<{ path: string; bytes: number }> {
    const path = join(this.config.dir, `${input.toolName}-${input.callId}-${input.suggestedName}`)
    await writeFile(path, input.text, { mode: 0o600 })
    this.saved.push({ toolName: input.toolName, callId: input.callId, path, text: input.text })
    return { path, bytes: Buffer.byteLength(input.text) }
  }
}

/** Loads the fs plugin rooted at `root` in a fresh test context. */
export async function loadFs(root: string, config: Partial<fs.Config> = {}) {
  const ctx = await createTestContext()
  const fiber = await ctx.plugin(fs, { root, ...config })
  const call = (name: string, args: unknown, extra: { parent?: symbol } = {}) => ctx.tools.execute({ name, arguments: args, ...extra })
  return { ctx, fiber, call }
}

export { codeOf, textOf, valueOf } from '@cordage/testing'
