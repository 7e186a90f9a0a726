// The path a third-party author and their users take, against a real registry: every package of this
// repository is published to a local Verdaccio with pnpm; an author outside the workspace runs
// `npm init cordage-plugin`, `npm install`, `npm test` and `npm publish`; a user runs plain
// `npm i @cordage/cli <plugins>` and `npx cordage` with a cordage.yml naming them.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killRunning, mustRun, runCommand, startRegistry, userEnvironment, type LocalRegistry } from './local-registry.js'

const workspace = fileURLToPath(new URL('../../../', import.meta.url))
const MINUTE = 60_000

/** A package's document on the registry (the parts read here). */
interface Packument {
  versions: Record<string, { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> }>
}
const packument = async (url: string) => (await (await fetch(url)).json()) as Packument

/** Every package `pnpm -r publish` publishes: the workspace's non-private packages. */
function publishable(): Array<{ name: string; version: string; dir: string }> {
  return ['packages', 'plugins', 'examples'].flatMap((group) =>
    readdirSync(join(workspace, group))
      .map((name) => join(workspace, group, name))
      .filter((dir) => existsSync(join(dir, 'package.json')))
      .map((dir) => ({ dir, ...JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
      .filter((manifest) => !manifest.private),
  )
}

/** Directories named `name` anywhere under `dir`'s node_modules (how many copies were installed). */
function copiesOf(dir: string, name: string): string[] {
  const found: string[] = []
  const walk = (modules: string) => {
    if (!existsSync(modules)) return
    for (const entry of readdirSync(modules)) {
      const scoped = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((inner) => `${entry}/${inner}`) : [entry]
      for (const packageName of scoped) {
        if (packageName === name) found.push(join(modules, packageName))
        walk(join(modules, packageName, 'node_modules'))
      }
    }
  }
  walk(join(dir, 'node_modules'))
  return found
}

describe('publishing to a registry and installing from it, outside the workspace', { timeout: 15 * MINUTE }, () => {
  let base: string
  let registry: LocalRegistry
  let env: NodeJS.ProcessEnv
  let published = false

  beforeAll(async () => {
    for (const { dir, name } of publishable()) {
      if (!existsSync(join(dir, 'dist/index.js'))) throw new Error(`${name} has no dist/: run \`pnpm build\` first`)
    }
    base = mkdtempSync(join(tmpdir(), 'cordage-registry-'))
    // The uplink is the registry npm is configured with here, as a user's would be.
    const configured = await mustRun('npm', ['config', 'get', 'registry'], { cwd: base, env: userEnvironment({}), timeoutMs: MINUTE })
    registry = await startRegistry(base, configured.stdout.trim())
    env = userEnvironment({ npm_config_registry: registry.url, npm_config_prefer_online: 'true', npm_config_yes: 'true' })
  }, 5 * MINUTE)

  afterAll(async () => {
    killRunning()
    await registry?.close()
    // Two installed projects: removing them takes a while on a small machine, so not on the event loop.
    if (base) await rm(base, { recursive: true, force: true })
  }, 5 * MINUTE)

  it('publishes every package of the workspace with pnpm, workspace: ranges replaced by versions', async () => {
    await mustRun('pnpm', ['-r', 'publish', '--no-git-checks'], {
      cwd: workspace,
      env: userEnvironment({ npm_config_userconfig: registry.npmrc }),
      timeoutMs: 5 * MINUTE,
    })
    for (const { name, version } of publishable()) {
      const manifest = (await packument(`${registry.url}${name.replace('/', '%2f')}`)).versions?.[version]
      expect(manifest, `${name}@${version}`).toBeDefined()
      const ranges = Object.values({ ...manifest.dependencies, ...manifest.peerDependencies })
      expect(
        ranges.filter((range) => String(range).startsWith('workspace:')),
        name,
      ).toEqual([])
    }
    published = true
  })

  it('npm init cordage-plugin scaffolds a package that installs, passes npm test and publishes, with plain npm', async () => {
    expect(published, 'the packages were published').toBe(true)
    const author = join(base, 'author')
    mkdirSync(author)
    // A fresh npm cache for the initializer alone: npx reuses a cached package of the same version, which
    // every run of this test publishes anew.
    const initEnv = { ...env, npm_config_cache: join(base, 'init-cache') }
    const init = await mustRun('npm', ['init', 'cordage-plugin', 'word-stats'], { cwd: author, env: initEnv, timeoutMs: 5 * MINUTE })
    expect(init.stdout).toContain('Created cordage-plugin-word-stats')
    const project = join(author, 'cordage-plugin-word-stats')
    await mustRun('npm', ['install'], { cwd: project, env, timeoutMs: 10 * MINUTE })
    const test = await mustRun('npm', ['test'], { cwd: project, env, timeoutMs: 5 * MINUTE })
    expect(test.stdout).toMatch(/Tests\s+11 passed \(11\)/)
    await mustRun('npm', ['publish'], { cwd: project, env: { ...env, npm_config_userconfig: registry.npmrc }, timeoutMs: 5 * MINUTE })
    expect(Object.keys((await packument(`${registry.url}cordage-plugin-word-stats`)).versions)).toEqual(['0.1.0'])
  })

  it('npm i @cordage/cli and tool packages, then npx cordage tools and call with a cordage.yml naming them', async () => {
    expect(published, 'the packages were published').toBe(true)
    const user = join(base, 'user')
    mkdirSync(user)
    writeFileSync(join(user, 'package.json'), JSON.stringify({ name: 'user-project', private: true }))
    await mustRun('npm', ['i', '@cordage/cli', 'cordage-plugin-word-count', 'cordage-plugin-word-stats'], { cwd: user, env, timeoutMs: 10 * MINUTE })
    // Peers are the host's very copies: one cordis and one @cordage/core for the CLI and every plugin.
    expect(copiesOf(user, 'cordis')).toHaveLength(1)
    expect(copiesOf(user, '@cordage/core')).toHaveLength(1)

    writeFileSync(join(user, 'cordage.yml'), 'plugins:\n  word-count: { top: 2 }\n  cordage-plugin-word-stats: { maxCharacters: 5 }\n')
    const npx = (args: string[]) => runCommand('npx', ['cordage', ...args], { cwd: user, env, timeoutMs: 2 * MINUTE })
    const tools = await npx(['tools', '--json'])
    expect(tools.stderr).toBe('')
    expect(JSON.parse(tools.stdout).map((tool: { name: string }) => tool.name)).toEqual(['word_count', 'word_stats'])
    expect(await npx(['call', 'word_count', '{"text":"one fish two fish red fish"}'])).toMatchObject({
      code: 0,
      stdout: '6 words, 1 lines, 26 characters; most frequent: fish (3), one (1)\n',
    })
    expect(await npx(['call', 'word_stats', '{"text":"hello"}'])).toMatchObject({ code: 0, stdout: 'HELLO (5 characters)\n' })
    const refused = await npx(['call', 'word_stats', '{"text":"toolong"}', '--json'])
    expect(refused.code).toBe(1)
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'TEXT_TOO_LONG' })

    writeFileSync(join(user, 'cordage.yml'), 'plugins:\n  word-count: { tpo: 2 }\n')
    const typo = await npx(['tools'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('cordage.yml: plugin word-count: unknown key "tpo"; did you mean "top"?')
  })
})
