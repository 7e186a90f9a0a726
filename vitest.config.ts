import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { createRequire } from 'node:module'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig, type Plugin } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import projects from './vitest.workspace.js'

// Workspace packages resolve to their TypeScript sources in tests (the `cordage-source` export condition),
// so `pnpm test` never runs stale `dist/` output; benchmarks resolve them to their builds (below).
const conditions = ['import', 'module', 'node', 'default']

/** A module of a workspace package, built: `<package>/dist/<path>.js`. */
const BUILT = /\/(?:packages|plugins)\/[^/]+\/dist\//

/**
 * Benchmarks measure the packages as users run them: workspace packages resolve to their builds, and a
 * source module imported by a relative path (`<package>/src/<path>.ts`) is replaced by its build
 * (`<package>/dist/<path>.js`); Node loads the builds itself. (Through vitest's module runner every call
 * across modules reads a getter of the importing module's namespace, which is not what users run.) The
 * config builds the workspace first (`tsc -b`, a no-op when nothing changed), so a benchmark never runs
 * a stale build. `vitest bench --mode sources` runs the sources instead, as tests do.
 */
function builtPackages(): Plugin {
  return {
    name: 'cordage:bench-built-packages',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true })
      const match = resolved && /^(.*\/(?:packages|plugins)\/[^/]+)\/src\/(.*)\.ts$/.exec(resolved.id)
      if (!match) return null
      const built = `${match[1]}/dist/${match[2]}.js`
      if (!existsSync(built)) throw new Error(`${resolved!.id} has no build at ${built}: is it outside tsconfig.build.json?`)
      return built
    },
  }
}

/**
 * The slowest files first across every project. Vitest's own order keeps each project's files together (in
 * name order, slowest first within one), so a slow file of a late project ran beside nothing at the end of the
 * suite. Files that failed last time still come first, then files with no recorded duration (new ones).
 */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files)
    const rank = (file: TestSpecification): [number, number] => {
      const result = this.ctx.cache.getFileTestResults(`${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`)
      if (!result) return [1, 0]
      return [result.failed ? 0 : 2, -result.duration]
    }
    const ranks = new Map(ordered.map((file) => [file, rank(file)]))
    return ordered.sort((a, b) => {
      const [groupA, durationA] = ranks.get(a)!
      const [groupB, durationB] = ranks.get(b)!
      return groupA - groupB || durationA - durationB
    })
  }
}

export default defineConfig(({ mode }) => {
  const benchmark = mode === 'benchmark'
  if (benchmark) {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
    execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: fileURLToPath(new URL('.', import.meta.url)), stdio: 'inherit' })
  }
  const resolved = benchmark ? conditions : ['cordage-source', ...conditions]
  return {
    resolve: { conditions: resolved },
    // Vitest passes these on to Node (`--conditions`) for the modules Node loads itself.
    // Not `module`: Node does not know it, and the OpenTelemetry packages' `module` builds import paths
    // without extensions (written for bundlers), which Node cannot load.
    ssr: { resolve: { conditions: resolved.filter((condition) => condition !== 'module'), externalConditions: benchmark ? [] : ['cordage-source'] } },
    plugins: benchmark ? [builtPackages()] : [],
    test: {
      projects,
      testTimeout: 30_000,
      hookTimeout: 30_000,
      // Most test time is spent waiting on child processes, servers and timers rather than computing (over
      // packages/cli the test processes keep about half of a 2-core machine busy), so a small machine runs
      // three files at a time (vitest's own default there is one); larger machines keep the default of one
      // fewer than the cores. Tests hold under the extra load: they bound time only as hang detectors.
      maxWorkers: Math.max(3, availableParallelism() - 1),
      sequence: { sequencer: SlowestFirst },
      // One benchmark file at a time: two at once on a small machine measure each other.
      ...(benchmark && { fileParallelism: false, server: { deps: { external: [BUILT] } } }),
    },
  }
})
