import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { pluginNames } from '../src/names.js'
import { scaffold } from '../src/scaffold.js'
import { VERSIONS } from '../src/manifest.js'

const run = promisify(execFile)
const workspace = fileURLToPath(new URL('../../../', import.meta.url))
const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url))
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'))

function temporary(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cordage-scaffold-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Every file under `dir` (relative paths), with its text. */
function contents(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {}
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const path = join(prefix, entry.name)
    if (entry.isDirectory()) Object.assign(files, contents(dir, path))
    else files[path] = readFileSync(join(dir, path), 'utf8')
  }
  return files
}

describe('plugin names', () => {
  it.each([
    ['word-stats', 'cordage-plugin-word-stats', 'word-stats', 'word_stats', 'wordStats'],
    ['cordage-plugin-word-stats', 'cordage-plugin-word-stats', 'word-stats', 'word_stats', 'wordStats'],
    ['@me/word-stats', '@me/word-stats', 'word-stats', 'word_stats', 'wordStats'],
    ['@me/cordage-plugin-x2-go', '@me/cordage-plugin-x2-go', 'x2-go', 'x2_go', 'x2Go'],
  ])('%s → package %s, plugin %s, tool %s', (input, packageName, name, tool, camel) => {
    expect(pluginNames(input)).toEqual({ packageName, name, tool, camel })
  })

  it.each(['Word-Stats', 'word_stats', '-x', 'x--y', '2fast', '', '../escape', 'a/b', '@/x', '@me', '@ME/x', 'x'.repeat(51)])(
    'refuses %j with INVALID_NAME',
    (input) => {
      expect(() => pluginNames(input)).toThrow(expect.objectContaining({ code: 'INVALID_NAME' }))
    },
  )

  it('in the repository takes the bare name and names the package @cordage/plugin-<name>', () => {
    expect(pluginNames('word-stats', { workspace: true }).packageName).toBe('@cordage/plugin-word-stats')
    expect(() => pluginNames('cordage-plugin-word-stats', { workspace: true })).toThrow('give the bare name (e.g. word-stats)')
  })
})

describe('scaffold', () => {
  it('writes a standalone package with every placeholder filled and peers at the released Cordage version', () => {
    const cwd = temporary()
    const result = scaffold({ name: 'word-stats', cwd })
    expect(result.directory).toBe(join(cwd, 'cordage-plugin-word-stats'))
    expect(result.files).toEqual([
      '.gitignore',
      'README.md',
      'package.json',
      'src/errors.ts',
      'src/index.ts',
      'src/word-stats.ts',
      'tests/word-stats.bench.ts',
      'tests/word-stats.test.ts',
      'tsconfig.build.json',
      'tsconfig.json',
    ])
    const files = contents(result.directory)
    for (const [path, text] of Object.entries(files)) expect(text, path).not.toMatch(/__(package|name|tool|camel|development)__/)
    expect(files['src/word-stats.ts']).toContain("name: 'word_stats'")
    expect(files['src/index.ts']).toContain("export const name = 'word-stats'")
    expect(files['README.md']).toMatch(/^# cordage-plugin-word-stats\n/)
    expect(files['README.md']).toContain('| `npm test` |')
    const manifest = JSON.parse(files['package.json']!)
    const version = readJson(join(workspace, 'packages/create-cordage-plugin/package.json')).version
    expect(manifest).toMatchObject({
      name: 'cordage-plugin-word-stats',
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      files: ['dist'],
      peerDependencies: { '@cordage/core': `^${version}`, cordis: `^${VERSIONS.cordis}` },
      scripts: { test: 'tsc -p tsconfig.json && vitest run', prepack: 'npm run build' },
    })
  })

  it('refuses a target that is not an empty directory and leaves it as it was; an empty one is fine', () => {
    const cwd = temporary()
    mkdirSync(join(cwd, 'taken'))
    writeFileSync(join(cwd, 'taken/notes.txt'), 'mine')
    expect(() => scaffold({ name: 'x', cwd, directory: 'taken' })).toThrow(expect.objectContaining({ code: 'TARGET_NOT_EMPTY' }))
    expect(readdirSync(join(cwd, 'taken'))).toEqual(['notes.txt'])
    writeFileSync(join(cwd, 'a-file'), '')
    expect(() => scaffold({ name: 'x', cwd, directory: 'a-file' })).toThrow(expect.objectContaining({ code: 'TARGET_NOT_EMPTY' }))
    mkdirSync(join(cwd, 'empty'))
    expect(scaffold({ name: 'x', cwd, directory: 'empty' }).files).toContain('src/x.ts')
  })

  it('in the repository writes plugins/<name> shaped like its siblings and adds it to the build once', () => {
    const root = temporary()
    writeFileSync(join(root, 'pnpm-workspace.yaml'), 'packages: [plugins/*]\n')
    writeFileSync(join(root, 'package.json'), JSON.stringify({ repository: { url: 'git+https://example.test/cordage.git' } }))
    writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ files: [], references: [{ path: 'packages/core' }] }))
    mkdirSync(join(root, 'packages/core'), { recursive: true })
    writeFileSync(join(root, 'packages/core/package.json'), JSON.stringify({ version: '0.7.1' }))
    const result = scaffold({ name: 'word-stats', cwd: root, workspace: true })
    expect(result.directory).toBe(join(root, 'plugins/word-stats'))
    expect(result.files).not.toContain('.gitignore')
    expect(result.files).not.toContain('tsconfig.build.json')
    const manifest = readJson(join(result.directory, 'package.json'))
    expect(manifest).toMatchObject({
      name: '@cordage/plugin-word-stats',
      version: '0.7.1',
      repository: { url: 'git+https://example.test/cordage.git', directory: 'plugins/word-stats' },
      exports: { '.': { 'cordage-source': './src/index.ts' } },
      dependencies: { '@cordage/core': 'workspace:*' },
    })
    expect(readFileSync(join(result.directory, 'README.md'), 'utf8')).toContain('pnpm test --project plugins/word-stats')
    expect(readJson(join(root, 'tsconfig.build.json')).references).toEqual([{ path: 'packages/core' }, { path: 'plugins/word-stats' }])
    expect(() => scaffold({ name: 'word-stats', cwd: root, workspace: true })).toThrow(expect.objectContaining({ code: 'TARGET_NOT_EMPTY' }))
    expect(readJson(join(root, 'tsconfig.build.json')).references).toHaveLength(2)
    expect(() => scaffold({ name: 'other', cwd: temporary(), workspace: true })).toThrow(expect.objectContaining({ code: 'NOT_A_WORKSPACE' }))
  })

  it('pins what this repository builds and tests with', () => {
    const root = readJson(join(workspace, 'package.json'))
    expect(VERSIONS).toEqual({
      cordis: readJson(join(workspace, 'packages/registry/package.json')).devDependencies.cordis,
      schemastery: readJson(join(workspace, 'packages/core/package.json')).dependencies.schemastery,
      typescript: root.devDependencies.typescript,
      vitest: root.devDependencies.vitest,
      typesNode: root.devDependencies['@types/node'],
      node: root.engines.node,
    })
  })
})

describe('create-cordage-plugin (the command)', () => {
  it('scaffolds into the current directory and says what to do next; a bad name exits 2 naming the rule', async () => {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`)
    const cwd = temporary()
    const { stdout } = await run(process.execPath, [bin, 'word-stats'], { cwd })
    expect(stdout).toContain('Created cordage-plugin-word-stats in cordage-plugin-word-stats: tool word_stats, 10 files.')
    expect(stdout).toContain('npm install\n  npm test')
    const failure = await run(process.execPath, [bin, 'Word Stats'], { cwd }).catch((error) => error)
    expect(failure.code).toBe(2)
    expect(failure.stderr).toContain('"Word Stats" is not a plugin name: use kebab-case')
    expect(readdirSync(cwd)).toEqual(['cordage-plugin-word-stats'])
  })
})

describe('the scaffolded package, built against this workspace (no registry)', { timeout: 180_000 }, () => {
  // What `npm install` would put in node_modules, linked from this workspace: its built packages and
  // the very toolchain it tests with. The registry test installs the published packages instead.
  function link(dir: string): void {
    const from: Record<string, string> = {
      '@cordage/core': join(workspace, 'packages/core'),
      '@cordage/registry': join(workspace, 'packages/registry'),
      '@cordage/testing': join(workspace, 'packages/testing'),
      cordis: join(workspace, 'packages/testing/node_modules/cordis'),
      schemastery: join(workspace, 'packages/testing/node_modules/schemastery'),
      typescript: join(workspace, 'node_modules/typescript'),
      vitest: join(workspace, 'node_modules/vitest'),
      '@types/node': join(workspace, 'node_modules/@types/node'),
    }
    mkdirSync(join(dir, 'node_modules/@cordage'), { recursive: true })
    mkdirSync(join(dir, 'node_modules/@types'), { recursive: true })
    for (const [name, path] of Object.entries(from)) symlinkSync(realpathSync(path), join(dir, 'node_modules', name), 'dir')
  }

  it('typechecks, passes its own tests and builds dist/ whose plugin loads', async () => {
    for (const name of ['core', 'registry', 'testing']) {
      if (!existsSync(join(workspace, `packages/${name}/dist/index.js`))) throw new Error(`packages/${name}/dist is missing: run \`pnpm build\` first`)
    }
    const { directory } = scaffold({ name: 'word-stats', cwd: temporary() })
    link(directory)
    const env = { ...process.env, NODE_PATH: '', NO_COLOR: '1' }
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { cwd: directory, env })
    const tests = await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run'], { cwd: directory, env })
    // Every test of the template ran and passed (a failure or a skip would change the count).
    expect(tests.stdout).toMatch(/Tests\s+11 passed \(11\)/)
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { cwd: directory, env })
    expect(readdirSync(join(directory, 'dist')).filter((file) => file.endsWith('.js'))).toEqual(['errors.js', 'index.js', 'word-stats.js'])
    const loaded = await run(
      process.execPath,
      ['--input-type=module', '-e', "const p = (await import('./dist/index.js')).default; console.log(p.name, typeof p.apply)"],
      {
        cwd: directory,
        env,
      },
    )
    expect(loaded.stdout).toBe('word-stats function\n')
  })
})
