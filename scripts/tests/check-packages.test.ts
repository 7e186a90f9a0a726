import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkPackages } from '../check-packages.mjs'

const roots: string[] = []
afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

const url = 'git+https://example.test/cordage.git'

/** A publishable package's manifest as the check wants it, for `dir` (e.g. `plugins/good`). */
const goodManifest = (dir: string, name: string) => ({
  name,
  version: '0.1.0',
  description: 'A package.',
  type: 'module',
  license: 'MIT',
  repository: { type: 'git', url, directory: dir },
  engines: { node: '>=20.19' },
  main: './dist/index.js',
  types: './dist/index.d.ts',
  exports: { '.': { 'cordage-source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' } },
  files: ['dist'],
  dependencies: { schemastery: '3.18.0' },
  peerDependencies: { cordis: '^4.0.0-rc.10' },
  devDependencies: { vitest: '4.1.12' },
  publishConfig: { access: 'public' },
})

/** A workspace root holding `files` (relative paths; objects are written as JSON). */
async function workspace(files: Record<string, string | object>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cordage-packages-'))
  roots.push(root)
  const all = { 'package.json': { private: true, repository: { type: 'git', url }, engines: { node: '>=20.19' } }, ...files }
  for (const [path, content] of Object.entries(all)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), typeof content === 'string' ? content : JSON.stringify(content))
  }
  return root
}

const goodSource = "import Schema from 'schemastery'\nimport type { Context } from 'cordis'\nexport { Schema }\n"

describe('the package metadata check', () => {
  it('passes a package with every field, and skips private ones', async () => {
    const root = await workspace({
      'plugins/good/package.json': goodManifest('plugins/good', '@cordage/plugin-good'),
      'plugins/good/src/index.ts': goodSource,
      'examples/demo/package.json': { name: 'demo', private: true },
    })
    expect(checkPackages(root)).toEqual([])
  })

  it.each([
    [
      'no repository',
      { repository: undefined },
      '"repository" must be { "type": "git", "url": "git+https://example.test/cordage.git", "directory": "plugins/good" }',
    ],
    ['a repository directory of another package', { repository: { type: 'git', url, directory: 'plugins/other' } }, '"repository" must be'],
    ['no engines', { engines: undefined }, '"engines.node" must be ">=20.19"'],
    ['no files', { files: undefined }, '"files" must list "dist"'],
    ['no main or types', { main: undefined }, '"main" and "types" must be'],
    ['default before types', { exports: { '.': { default: './dist/index.js', types: './dist/index.d.ts' } } }, '"types" before "default"'],
    ['a scoped package without public access', { publishConfig: undefined }, 'publishConfig'],
    ['a pinned peer', { peerDependencies: { cordis: '4.0.0-rc.10' } }, 'peer "cordis": "4.0.0-rc.10" pins one version'],
    [
      'a workspace:* peer',
      { peerDependencies: { cordis: '^4.0.0-rc.10', '@cordage/core': 'workspace:*' } },
      'peer "@cordage/core": "workspace:*" pins one version',
    ],
    [
      'a file: dependency',
      { dependencies: { schemastery: 'file:../schemastery' } },
      'dependencies "schemastery": "file:../schemastery" does not install from a registry',
    ],
    ['no type module', { type: undefined }, '"type" must be "module"'],
  ])('reports %s', async (_label, change, message) => {
    const root = await workspace({
      'plugins/good/package.json': { ...goodManifest('plugins/good', '@cordage/plugin-good'), ...change },
      'plugins/good/src/index.ts': goodSource,
    })
    const offences = checkPackages(root)
    expect(offences).toHaveLength(1)
    expect(offences[0]).toContain('plugins/good/package.json: ')
    expect(offences[0]).toContain(message)
  })

  it('reports what src/ imports that only a devDependency provides, type-only and dynamic imports too', async () => {
    const root = await workspace({
      'plugins/good/package.json': goodManifest('plugins/good', '@cordage/plugin-good'),
      'plugins/good/src/index.ts': goodSource,
      'plugins/good/src/deep/more.ts':
        "import type {\n  Suite,\n} from 'vitest'\nexport const load = () => import('yaml/util')\nexport * from '@cordage/plugin-good/extra'\n",
    })
    expect(checkPackages(root)).toEqual([
      'plugins/good/package.json: plugins/good/src/deep/more.ts imports "vitest", which is not in dependencies or peerDependencies',
      'plugins/good/package.json: plugins/good/src/deep/more.ts imports "yaml/util", which is not in dependencies or peerDependencies',
    ])
  })
})
