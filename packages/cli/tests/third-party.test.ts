import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cordage as run, project } from './helpers.js'

const workspace = fileURLToPath(new URL('../../../', import.meta.url))
const example = join(workspace, 'examples/third-party-tool')

// Installing without a registry: the tarball is extracted where a package manager would put it, and
// what a package manager would add next to it — the peer dependencies (the host's own @cordage/core and
// cordis) and the package's one dependency (schemastery) — is linked from the packages this workspace
// already installed. Peers must be the host's very copies: a second @cordage/core or cordis would be a
// different module instance from the one the `cordage` command runs.
function install(dir: string, tarball: string): void {
  const target = join(dir, 'node_modules/cordage-plugin-word-count')
  mkdirSync(target, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'])
  mkdirSync(join(dir, 'node_modules/@cordage'), { recursive: true })
  const links: Record<string, string> = {
    '@cordage/core': join(workspace, 'packages/core'),
    cordis: realpathSync(join(workspace, 'packages/cli/node_modules/cordis')),
    schemastery: realpathSync(join(workspace, 'packages/core/node_modules/schemastery')),
  }
  for (const [name, path] of Object.entries(links)) symlinkSync(path, join(dir, 'node_modules', name), 'dir')
}

// `pnpm exec` puts the workspace's hoisted store on NODE_PATH; a user's project has none of that (and
// the command resolves plugins without it).
const cordage = (args: string[], options: { cwd: string }) => run(args, { ...options, env: { NODE_PATH: '' } })

describe('a third-party tool package installed from its packed tarball', { timeout: 120_000 }, () => {
  let packs: string
  let tarball: string
  beforeAll(() => {
    if (!existsSync(join(example, 'dist/index.js'))) throw new Error(`${example}/dist is missing: run \`pnpm build\` first`)
    packs = mkdtempSync(join(tmpdir(), 'cordage-pack-'))
    execFileSync('pnpm', ['pack', '--pack-destination', packs], { cwd: example, stdio: 'pipe' })
    tarball = join(
      packs,
      readdirSync(packs).find((name) => name.endsWith('.tgz'))!,
    )
  })
  afterAll(() => rmSync(packs, { recursive: true, force: true }))

  it('is not found until it is installed, then loads by package name for `tools` and `call`', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  cordage-plugin-word-count: { top: 2 }\n' })
    const missing = await cordage(['tools'], { cwd: dir })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('cannot find plugin "cordage-plugin-word-count"')

    install(dir, tarball)
    const published = readdirSync(join(dir, 'node_modules/cordage-plugin-word-count')).sort()
    expect(published).toEqual(['README.md', 'dist', 'package.json'])

    const tools = await cordage(['tools', '--json'], { cwd: dir })
    expect(tools.stderr).toBe('')
    expect(tools.code).toBe(0)
    const [tool] = JSON.parse(tools.stdout)
    expect(tool).toMatchObject({
      name: 'word_count',
      description: expect.stringContaining('2 most frequent words'),
      parameters: { type: 'object', required: ['text'] },
    })

    const call = await cordage(['call', 'word_count', '{"text":"one fish two fish red fish"}'], { cwd: dir })
    expect(call).toMatchObject({ code: 0, stdout: '6 words, 1 lines, 26 characters; most frequent: fish (3), one (1)\n' })
    const value = await cordage(['call', 'word_count', '{"text":"a b a"}', '--json'], { cwd: dir })
    expect(JSON.parse(value.stdout)).toEqual({
      words: 3,
      lines: 1,
      characters: 5,
      frequent: [
        { word: 'a', count: 2 },
        { word: 'b', count: 1 },
      ],
    })
  })

  it('answers a coded failure from the package, a shorthand name, and a config typo in cordage.yml', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  word-count: { maxCharacters: 3 }\n' })
    install(dir, tarball)
    const refused = await cordage(['call', 'word_count', '{"text":"four"}', '--json'], { cwd: dir })
    expect(refused.code).toBe(1)
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'TEXT_TOO_LONG' })

    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  cordage-plugin-word-count: { tpo: 2 }\n')
    const typo = await cordage(['tools'], { cwd: dir })
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('cordage.yml: plugin cordage-plugin-word-count: unknown key "tpo"; did you mean "top"?')
    expect(dirname(realpathSync(join(dir, 'node_modules/@cordage/core')))).toBe(join(workspace, 'packages'))
  })
})
