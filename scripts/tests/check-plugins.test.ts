import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkArchitecture, checkHouse } from '../check-plugins.mjs'

const roots: string[] = []
afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

interface FakePackage {
  group: 'packages' | 'plugins'
  dir: string
  name: string
  dependencies?: Record<string, string>
  /** The built entry point (`dist/index.js`), plain ESM. */
  entry?: string
  /** `src/index.ts`, read for its length and its imports. */
  source?: string
}

async function workspace(packages: FakePackage[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cordage-house-'))
  roots.push(root)
  for (const pkg of packages) {
    const dir = join(root, pkg.group, pkg.dir)
    await mkdir(join(dir, 'dist'), { recursive: true })
    await mkdir(join(dir, 'src'), { recursive: true })
    const manifest = { name: pkg.name, type: 'module', exports: { '.': { default: './dist/index.js' } }, dependencies: pkg.dependencies ?? {} }
    await writeFile(join(dir, 'package.json'), JSON.stringify(manifest))
    if (pkg.entry !== undefined) await writeFile(join(dir, 'dist', 'index.js'), pkg.entry)
    await writeFile(join(dir, 'src', 'index.ts'), pkg.source ?? '')
  }
  return root
}

// A strict schemastery-like Config as strictConfig makes it: a schema function that rejects unknown keys.
const strictSchema = `
const Config = Object.assign((value) => { if (Object.keys(value ?? {}).some((key) => key !== 'limit')) throw Object.assign(new Error('unknown key'), { code: 'INVALID_CONFIG' }); return value }, { type: 'object', toJSON: () => ({}) })
`
const goodPlugin = `${strictSchema}
export const name = 'good'
export const inject = ['tools']
export { Config }
export function apply() {}
export default { name, inject, Config, apply }
`
const core = { group: 'packages', dir: 'core', name: '@cordage/core', entry: '' } as const

describe('the house check', () => {
  it('passes a plugin of the one shape whose arrows point downward', async () => {
    const root = await workspace([
      core,
      {
        group: 'plugins',
        dir: 'good',
        name: '@cordage/plugin-good',
        dependencies: { '@cordage/core': 'workspace:*' },
        entry: goodPlugin,
        source: "import { strictConfig } from '@cordage/core'\n",
      },
    ])
    expect(await checkHouse(root)).toEqual([])
  })

  it('names every way a plugin breaks the shape', async () => {
    const loose = `
const Config = Object.assign((value) => value, { type: 'object', toJSON: () => ({}) })
export { Config }
export function apply() {}
${Array.from({ length: 12 }, (_, index) => `export const extra${index} = ${index}`).join('\n')}
`
    const root = await workspace([core, { group: 'plugins', dir: 'loose', name: '@cordage/plugin-loose', entry: loose, source: 'x\n'.repeat(130) }])
    expect(await checkHouse(root)).toEqual([
      '@cordage/plugin-loose: src/index.ts has 131 lines (composition only, at most 120)',
      '@cordage/plugin-loose: exports 14 names (at most 12: the plugin shape and its public API)',
      '@cordage/plugin-loose: exports no `name`',
      '@cordage/plugin-loose: exports no `inject` (an array or object, [] when it needs nothing)',
      '@cordage/plugin-loose: Config accepts unknown keys (wrap it in strictConfig(name, …) from @cordage/core)',
      '@cordage/plugin-loose: has no default export (the plugin itself)',
    ])
  })

  it('checks a Service-class default export against the exported name, inject and Config', async () => {
    const service = `${strictSchema}
export const name = 'svc'
export const inject = ['tools']
export { Config }
export default class Svc { static inject = ['tools']; static Config = Config }
`
    const root = await workspace([core, { group: 'plugins', dir: 'svc', name: '@cordage/plugin-svc', entry: service }])
    expect(await checkHouse(root)).toEqual(["@cordage/plugin-svc: the default export's static inject is not the exported inject"])
  })

  it('refuses arrows that do not point downward and imports package.json does not declare', async () => {
    const root = await workspace([
      core,
      { group: 'packages', dir: 'registry', name: '@cordage/registry', dependencies: { '@cordage/plugin-good': 'workspace:*' }, entry: '' },
      { group: 'plugins', dir: 'good', name: '@cordage/plugin-good', dependencies: { '@cordage/agent': 'workspace:*' }, entry: goodPlugin },
      {
        group: 'plugins',
        dir: 'other',
        name: '@cordage/plugin-other',
        dependencies: { '@cordage/plugin-good': 'workspace:*' },
        entry: goodPlugin,
        source: "import { x } from '@cordage/services'\n",
      },
    ])
    expect(await checkHouse(root)).toEqual([
      '@cordage/registry: depends on @cordage/plugin-good, but no package or plugin depends on a plugin (share through @cordage/services)',
      '@cordage/plugin-good: depends on @cordage/agent, but only plugins that run agents depend on @cordage/agent (the model seam types are in @cordage/services)',
      '@cordage/plugin-other: src imports @cordage/services, which package.json does not declare',
      '@cordage/plugin-other: depends on @cordage/plugin-good, but no package or plugin depends on a plugin (share through @cordage/services)',
    ])
  })

  it("keeps the registry's Cordis seam to the packages allowed to read it", async () => {
    const seam = "import { serviceOf } from '@cordage/registry/cordis-seam'\n"
    const registry = { '@cordage/registry': 'workspace:*' }
    const root = await workspace([
      core,
      { group: 'packages', dir: 'registry', name: '@cordage/registry', dependencies: { '@cordage/core': 'workspace:*' }, entry: '' },
      { group: 'plugins', dir: 'subagent', name: '@cordage/plugin-subagent', dependencies: registry, entry: goodPlugin, source: seam },
      { group: 'plugins', dir: 'good', name: '@cordage/plugin-good', dependencies: registry, entry: goodPlugin, source: seam },
    ])
    expect(await checkHouse(root)).toEqual([
      '@cordage/plugin-good: src imports @cordage/registry/cordis-seam, which is internal (hold `ctx.tools` as given; count listeners with listenerCount)',
    ])
  })

  it('says a plugin is not built rather than passing it', async () => {
    const root = await workspace([core, { group: 'plugins', dir: 'unbuilt', name: '@cordage/plugin-unbuilt' }])
    expect(await checkHouse(root)).toEqual(['@cordage/plugin-unbuilt: no built entry point (./dist/index.js); run `pnpm build` first'])
  })
})

describe("the check of ARCHITECTURE's dependency graph", () => {
  const graph = (lines: string) => `# Architecture\n\n## Dependency graph\n\nText.\n\n\`\`\`\n${lines}\n\`\`\`\n\n## Next\n`
  const packages = async () =>
    workspace([
      core,
      { group: 'packages', dir: 'registry', name: '@cordage/registry', dependencies: { '@cordage/core': 'workspace:*', schemastery: '3.18.0' } },
      { group: 'packages', dir: 'queue', name: '@cordage/queue', dependencies: { '@cordage/core': 'workspace:*' } },
      {
        group: 'plugins',
        dir: 'fs',
        name: '@cordage/plugin-fs',
        dependencies: { '@cordage/core': 'workspace:*', '@cordage/registry': 'workspace:*' },
      },
      { group: 'packages', dir: 'cli', name: '@cordage/cli', dependencies: { '@cordage/plugin-fs': 'workspace:*', '@cordage/queue': 'workspace:*' } },
    ])

  it('passes a graph that draws every edge, with wrapped names and dependencies', async () => {
    const root = await packages()
    await writeFile(
      join(root, 'ARCHITECTURE.md'),
      graph(['core  → —', 'registry,', 'queue → core', 'plugin-fs → core,', '            registry', 'cli', '  → plugin-fs, queue'].join('\n')),
    )
    expect(checkArchitecture(root)).toEqual([])
  })

  it('names a missing package, a missing edge, an edge no package.json has and a package that does not exist', async () => {
    const root = await packages()
    await writeFile(
      join(root, 'ARCHITECTURE.md'),
      graph(['core → —', 'registry → core, queue', 'plugin-fs → core', 'cli → plugin-fs, queue', 'studio → core'].join('\n')),
    )
    expect(checkArchitecture(root)).toEqual([
      'ARCHITECTURE.md: queue is not in the dependency graph',
      "ARCHITECTURE.md draws registry → queue, which registry's package.json does not declare",
      "plugin-fs depends on registry (package.json), which ARCHITECTURE.md's graph does not draw",
      'ARCHITECTURE.md draws studio, which is no package under packages/ or plugins/',
    ])
  })

  it('fails without the graph rather than passing', async () => {
    const root = await packages()
    expect(checkArchitecture(root)).toEqual(['ARCHITECTURE.md is missing'])
    await writeFile(join(root, 'ARCHITECTURE.md'), '# Architecture\n')
    expect(checkArchitecture(root)).toEqual(['ARCHITECTURE.md has no "## Dependency graph" block'])
  })
})
