import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { packageEntry } from '../src/package-entry.js'
import { cordage, project } from './helpers.js'

/** A plugin module registering one tool, `name`, whose content is `said`. */
const pluginSource = (name: string, said: string, format: 'esm' | 'cjs' = 'esm') => {
  const body = `{
  name: '${name}-plugin',
  inject: ['tools'],
  apply(ctx) {
    ctx.tools.register({
      name: '${name}',
      description: 'Says ${said}.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      execute: () => '${said}',
    })
  },
}`
  return format === 'esm' ? `export default ${body}\n` : `module.exports = ${body}\n`
}

/** Writes `files` (paths relative to `dir`, folders created) and returns `dir`. */
function write(dir: string, files: Record<string, string | object>): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content))
  }
  return dir
}

/** A package that only `exports` (no `main`), with different modules for `import` and `require`. */
const dualPackage = (name: string) => ({
  'package.json': { name, type: 'module', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js', require: './dist/index.cjs' } } },
  'dist/index.js': pluginSource('esm_tool', 'loaded through import'),
  'dist/index.cjs': pluginSource('cjs_tool', 'loaded through require', 'cjs'),
})

const toolNames = async (cwd: string, env: Record<string, string> = {}) => {
  const result = await cordage(['tools', '--json'], { cwd, env: { NODE_PATH: '', ...env } })
  return { ...result, names: result.code === 0 ? JSON.parse(result.stdout).map((tool: { name: string }) => tool.name) : [] }
}

describe('cordage.yml plugin resolution', () => {
  it('loads a package directory path through its package.json "exports", the import entry', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  ./vendor/dual: {}\n' })
    const prefixed = Object.fromEntries(Object.entries(dualPackage('dual')).map(([path, content]) => [`vendor/dual/${path}`, content]))
    write(dir, prefixed)
    const result = await toolNames(dir)
    expect(result.stderr).toBe('')
    expect(result.names).toEqual(['esm_tool'])
    const call = await cordage(['call', 'esm_tool', '{}'], { cwd: dir })
    expect(call).toMatchObject({ code: 0, stdout: 'loaded through import\n' })
  })

  it('loads an installed package by name through its import condition, from node_modules above cordage.yml too', async () => {
    const top = project()
    const prefixed = Object.fromEntries(
      Object.entries(dualPackage('cordage-plugin-dual')).map(([path, content]) => [`node_modules/cordage-plugin-dual/${path}`, content]),
    )
    write(top, { ...prefixed, 'app/cordage.yml': 'plugins:\n  dual: {}\n' })
    expect((await toolNames(join(top, 'app'))).names).toEqual(['esm_tool'])
  })

  it('never finds a package through NODE_PATH', async () => {
    const elsewhere = project()
    write(elsewhere, { 'node_modules/cordage-plugin-hidden/package.json': { name: 'cordage-plugin-hidden', main: 'index.cjs' } })
    write(elsewhere, { 'node_modules/cordage-plugin-hidden/index.cjs': pluginSource('hidden', 'found through NODE_PATH', 'cjs') })
    const dir = project({ 'cordage.yml': 'plugins:\n  hidden: {}\n' })
    const result = await toolNames(dir, { NODE_PATH: join(elsewhere, 'node_modules') })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('cannot find plugin "hidden"; tried hidden, @cordage/plugin-hidden, cordage-plugin-hidden')
  })

  it('says a package directory whose entry is missing is not built, naming the entry', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  ./unbuilt: {}\n' })
    write(dir, { 'unbuilt/package.json': { name: 'unbuilt', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } } })
    const result = await toolNames(dir)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(
      `cordage.yml: plugin ./unbuilt: cannot load it: ${join(dir, 'unbuilt')}: its entry ./dist/index.js does not exist (is the package built?)`,
    )
  })
})

describe('packageEntry', () => {
  const root = project()
  const entry = (name: string, manifest: object, files: string[] = [], subpath = '.') => {
    write(root, { [`${name}/package.json`]: manifest, ...Object.fromEntries(files.map((file) => [`${name}/${file}`, ''])) })
    return packageEntry(join(root, name), subpath)
  }

  it.each([
    ['a string export', { exports: './main.js' }, ['main.js'], '.', 'main.js'],
    [
      'nested conditions, first match in key order',
      { exports: { '.': { node: { import: './node.mjs' }, default: './other.js' } } },
      ['node.mjs', 'other.js'],
      '.',
      'node.mjs',
    ],
    ['a fallback array', { exports: { '.': [{ worker: './worker.js' }, './fallback.js'] } }, ['fallback.js'], '.', 'fallback.js'],
    ['a subpath pattern', { exports: { './tools/*': './dist/tools/*.js' } }, ['dist/tools/grep.js'], './tools/grep', 'dist/tools/grep.js'],
    ['main without exports', { main: 'lib/start.js' }, ['lib/start.js'], '.', 'lib/start.js'],
    ['index.js without main or exports', {}, ['index.js'], '.', 'index.js'],
  ])('resolves %s', (label, manifest, files, subpath, expected) => {
    const name = label.replaceAll(' ', '-')
    expect(entry(name, manifest, files, subpath)).toEqual({ file: join(root, name, expected) })
  })

  it.each([
    ['a target outside the package', { exports: './../escape.js' }, 'points outside the package (./../escape.js)'],
    ['a main outside the package', { main: '../escape.js' }, 'its entry ../escape.js is outside the package'],
    ['only a require condition', { exports: { require: './index.cjs' } }, 'has no entry for "." under the conditions node, import, default'],
  ])('refuses %s', (label, manifest, problem) => {
    write(root, { 'escape.js': '' })
    expect(entry(label.replaceAll(' ', '-'), manifest, ['index.cjs']).problem).toContain(problem)
  })
})
