import { describe, expect, it } from 'vitest'
import { cordage, echoPlugin, project } from './helpers.js'

describe.concurrent('cordage.yml', { timeout: 90_000 }, () => {
  it('an unknown plugin stops the start (exit 2) and says what was tried', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  nonexistent-thing: {}\n' })
    const result = await cordage(['tools'], { cwd: dir })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(
      'cordage.yml: cannot find plugin "nonexistent-thing"; tried nonexistent-thing, @cordage/plugin-nonexistent-thing, cordage-plugin-nonexistent-thing',
    )
  })

  it('an invalid field names the plugin and the field, before any plugin starts', async () => {
    const dir = project({ 'cordage.yml': "plugins:\n  ./echo.mjs: {}\n  '@cordage/plugin-fs':\n    root: 42\n", 'echo.mjs': echoPlugin })
    const result = await cordage(['call', 'echo', '{"text":"x"}'], { cwd: dir })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim()).toBe('cordage.yml: plugin @cordage/plugin-fs: root: expected string but got 42')
  })

  it('reports every invalid field of every plugin at once', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  ./echo.mjs:\n    prefix: 7\n  fs:\n    root: 42\n', 'echo.mjs': echoPlugin })
    const result = await cordage(['tools'], { cwd: dir })
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')).toEqual([
      'cordage.yml: plugin ./echo.mjs: prefix: expected string but got 7',
      'cordage.yml: plugin fs: root: expected string but got 42',
    ])
  })

  it("a typo in a plugin's config stops the start, naming the plugin, the key and the nearest valid key", async () => {
    const dir = project({
      'cordage.yml': 'plugins:\n  policy:\n    rules:\n      - tool: read\n        whne: [{ pointer: /path, glob: secret.txt }]\n        action: deny\n',
    })
    const result = await cordage(['tools'], { cwd: dir })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim()).toBe(
      'cordage.yml: plugin policy: rules[0]: unknown key "whne"; did you mean "when"? (valid keys: tool, path, access, when, action, reason, feedback, pointers, replacement, content, direct)',
    )
  })

  it('resolves `fs` as shorthand for @cordage/plugin-fs and accepts a list of { name, config }', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  - name: fs\n    config: { root: . }\n', 'a.txt': 'x' })
    const result = await cordage(['tools', '--json'], { cwd: dir })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).map((tool: { name: string }) => tool.name)).toEqual(['edit', 'glob', 'grep', 'read', 'write'])
  })

  it('rejects unknown top-level keys and broken YAML with the file named', async () => {
    const unknown = await cordage(['tools'], { cwd: project({ 'cordage.yml': 'plugin:\n  fs: {}\n' }) })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(
      'cordage.yml: unknown key "plugin"; did you mean "plugins"? (valid keys: plugins, model, store, serve, otel, agent, queue)',
    )
    const broken = await cordage(['tools'], { cwd: project({ 'cordage.yml': 'plugins: [fs\n' }) })
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain('cordage.yml: not valid YAML')
  })

  it('a plugin whose apply throws is reported as failing to start', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  ./boom.mjs: {}\n', 'boom.mjs': 'export function apply() { throw new Error("no database") }\n' })
    const result = await cordage(['tools'], { cwd: dir })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('cordage.yml: plugin ./boom.mjs: failed to start: no database')
  })

  it('unknown commands and flags are usage errors (exit 2)', async () => {
    const dir = project()
    const command = await cordage(['frobnicate'], { cwd: dir })
    expect(command.code).toBe(2)
    expect(command.stderr).toContain('unknown command "frobnicate"; available: run, chat, tools, call, replay')
    const flag = await cordage(['tools', '--bogus'], { cwd: dir })
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("Unknown option '--bogus'")
  })

  it('options every command takes may come before the command (--cwd, --config); others there are usage errors', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  ./echo.mjs: {}\n', 'echo.mjs': echoPlugin })
    const elsewhere = project()
    const before = await cordage(['--cwd', dir, 'tools'], { cwd: elsewhere })
    expect(before.stderr).toBe('1 tool from ./echo.mjs\n')
    expect(before.code).toBe(0)
    expect(before.stdout).toContain('echo')
    const equals = await cordage([`--cwd=${dir}`, 'call', 'echo', '{"text":"hi"}'], { cwd: elsewhere })
    expect(equals.code).toBe(0)
    expect(equals.stdout).toContain('hi')
    const bogus = await cordage(['--bogus', 'tools'], { cwd: dir })
    expect(bogus.code).toBe(2)
    expect(bogus.stderr).toContain('unknown option "--bogus" before the command; options before it: --cwd, --config, --verbose, --help')
  })
})
