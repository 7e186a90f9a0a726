import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkSizes } from '../check-size.mjs'

const roots: string[] = []
afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

/** A workspace root holding `files` (relative paths). */
async function workspace(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cordage-sizes-'))
  roots.push(root)
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), content)
  }
  return root
}

const lines = (count: number) => Array.from({ length: count }, (_, index) => `line ${index}`).join('\n') + '\n'

describe('the size check', () => {
  it('passes files at the limits: a 400-line source, a 150-line README, long tests and built output', async () => {
    const root = await workspace({
      'plugins/good/src/index.ts': lines(400),
      'plugins/good/README.md': lines(150),
      'plugins/good/tests/long.test.ts': lines(900),
      'plugins/good/dist/index.js': lines(900),
      'scripts/tool.mjs': lines(10),
    })
    expect(checkSizes(root)).toEqual([])
  })

  it('names a source over 400 lines, a README over 150 and a long script', async () => {
    const root = await workspace({
      'packages/big/src/deep/module.ts': lines(401),
      'examples/demo/README.md': lines(151),
      'scripts/long.mjs': lines(450),
    })
    expect(checkSizes(root).sort()).toEqual([
      'examples/demo/README.md: 151 lines (a package README stays within 150)',
      'packages/big/src/deep/module.ts: 401 lines (source files stay under 400; split by concept)',
      'scripts/long.mjs: 450 lines (source files stay under 400; split by concept)',
    ])
  })
})
