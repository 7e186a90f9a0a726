import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { CordageError } from '@cordage/core'
import * as McpClient from '@cordage/plugin-mcp-client'
import * as Policy from '@cordage/plugin-policy'
import { Spill } from '@cordage/plugin-spill'
import { chooseModel, configIssues, findCommand, commands, parseConfig, resolvePlugins } from '../src/index.js'

describe('parseConfig', () => {
  it('accepts plugins as a map, a list of names, one-key maps and { name, config }, in file order', () => {
    const map = parseConfig({ plugins: { fs: { root: '.' }, shell: null } }, '/p/cordage.yml')
    expect(map.plugins).toEqual([
      { spec: 'fs', config: { root: '.' } },
      { spec: 'shell', config: undefined },
    ])
    const list = parseConfig({ plugins: ['spill', { fs: { root: 'x' } }, { name: './local.js', config: { a: 1 } }] }, '/p/cordage.yml')
    expect(list.plugins).toEqual([
      { spec: 'spill', config: undefined },
      { spec: 'fs', config: { root: 'x' } },
      { spec: './local.js', config: { a: 1 } },
    ])
    expect(list.baseDir).toBe('/p')
  })

  it.each([
    [{ plugins: 3 }, 'cordage.yml: plugins: expected a map or a list of plugin names'],
    [{ plugins: [{ a: 1, b: 2 }] }, 'cordage.yml: plugins[0]: expected a plugin name, { <name>: <config> } or { name, config }'],
    [{ model: { model: 4 } }, 'cordage.yml: model: model: expected string but got 4'],
    [{ agent: { maxTurns: 0 } }, 'cordage.yml: agent: maxTurns: expected a positive integer but got 0'],
    [{ plugin: { fs: {} } }, 'cordage.yml: unknown key "plugin"; did you mean "plugins"? (valid keys: plugins, model, store, serve, otel, agent, queue)'],
    [{ agent: { maxturns: 3 } }, 'cordage.yml: agent: unknown key "maxturns"; did you mean "maxTurns"? (valid keys: maxTurns, system, durability, compaction)'],
    [{ agent: { durability: 'disk' } }, 'cordage.yml: agent: durability: expected process (a run returns once its events are written) or machine'],
  ])('rejects %j', (document, message) => {
    expect(() => parseConfig(document, '/p/cordage.yml')).toThrow(message)
  })

  it('reads agent: { durability }', () => {
    expect(parseConfig({ agent: { durability: 'machine' } }, '/p/cordage.yml').agent.durability).toBe('machine')
  })

  it('reads store: { postgres } and refuses any other store shape, naming the key', () => {
    expect(parseConfig({ store: { postgres: 'postgres://u@127.0.0.1/db' } }, '/p/cordage.yml').store).toEqual({ postgres: 'postgres://u@127.0.0.1/db' })
    expect(parseConfig({}, '/p/cordage.yml').store).toBeUndefined()
    expect(() => parseConfig({ store: { postgress: 'x' } }, '/p/cordage.yml')).toThrow(/store: .*postgress/)
    expect(() => parseConfig({ store: { postgres: 5 } }, '/p/cordage.yml')).toThrow(/store: expected \{ postgres/)
    expect(() => parseConfig({ store: 'postgres://x' }, '/p/cordage.yml')).toThrow(/store/)
  })

  it('reads queue: { redis, … } and refuses a bad url, a bad number or a typo, naming the key', () => {
    const queue = { redis: 'redis://127.0.0.1:6379', attempts: 2 }
    expect(parseConfig({ queue }, '/p/cordage.yml').queue).toEqual(queue)
    expect(() => parseConfig({ queue: { redis: 'http://x' } }, '/p/cordage.yml')).toThrow(/queue: redis: expected a redis:\/\/ or rediss:\/\/ url/)
    expect(() => parseConfig({ queue: { redis: 'redis://x', attempts: 0 } }, '/p/cordage.yml')).toThrow(/queue: attempts: expected a positive integer/)
    expect(() => parseConfig({ queue: { redis: 'redis://x', lockDuraton: 5 } }, '/p/cordage.yml')).toThrow(/lockDuraton.*lockDuration/)
    expect(() => parseConfig({ queue: 'redis://x' }, '/p/cordage.yml')).toThrow(/queue: expected \{ redis/)
  })

  it('throws INVALID_CONFIG errors (CordageError) for cordage.yml problems', () => {
    const error = (() => {
      try {
        parseConfig({ plugins: 3 }, '/p/cordage.yml')
      } catch (error) {
        return error as { code?: string }
      }
    })()
    expect(CordageError.is(error) && error.code).toBe('INVALID_CONFIG')
  })
})

describe('configIssues', () => {
  it('prints each standard-schema issue as `field: message`', () => {
    const plugin = {
      apply() {},
      Config: {
        '~standard': {
          version: 1,
          vendor: 't',
          validate: () => ({
            issues: [
              { message: '$.a.b expected string but got 1', path: ['a', 'b'] },
              { message: 'bad', path: ['list', 2] },
            ],
          }),
        },
      },
    }
    expect(configIssues(plugin as any, {})).toEqual(['a.b: expected string but got 1', 'list[2]: bad'])
  })

  it.each([
    ['policy', Policy, { rulez: [] }, 'unknown key "rulez"; did you mean "rules"? (valid keys: rules, root)'],
    ['policy', Policy, { rules: [{ tool: 'read', whne: [], action: 'deny' }] }, /^rules\[0\]: unknown key "whne"; did you mean "when"\?/],
    ['spill', Spill, { maxInlineByte: 1 }, /^unknown key "maxInlineByte"; did you mean "maxInlineBytes"\?/],
    ['mcp-client', McpClient, { name: 'x', transport: 'stdio', command: 'y', argz: [] }, /^unknown key "argz"; did you mean "args"\?/],
  ])('names the key and the nearest valid key for a typo in %s', (_name, plugin, config, message) => {
    expect(configIssues(plugin as any, config)).toEqual([typeof message === 'string' ? message : expect.stringMatching(message)])
  })

  it('checks unknown keys of a third-party schemastery Config that is not strict', () => {
    const plugin = { apply() {}, Config: Schema.object({ prefix: Schema.string() }) }
    expect(configIssues(plugin as any, { prefx: 'x' })).toEqual(['unknown key "prefx"; did you mean "prefix"? (valid keys: prefix)'])
    expect(configIssues(plugin as any, { prefix: 'x' })).toEqual([])
  })
})

describe('chooseModel', () => {
  it('prefers a cassette flag, then cordage.yml, then the provider from flags and environment', () => {
    expect(chooseModel({}, { cassette: 't.json' }, '/w', '/p', {})).toEqual({ kind: 'cassette', file: '/w/t.json' })
    expect(chooseModel({ cassette: 'c.json' }, {}, '/w', '/p', {})).toEqual({ kind: 'cassette', file: '/p/c.json' })
    expect(chooseModel({ cassette: 'c.json' }, { model: 'm' }, '/w', '/p', { OPENAI_API_KEY: 'k' })).toEqual({
      kind: 'provider',
      provider: 'openai',
      config: { model: 'm' },
    })
    expect(chooseModel({}, {}, '/w', '/p', { DEEPSEEK_API_KEY: 'k' })).toEqual({
      kind: 'provider',
      provider: 'openai',
      config: { baseURL: 'https://api.deepseek.com/v1' },
    })
    expect(chooseModel({}, { baseURL: 'http://127.0.0.1:11434/v1' }, '/w', '/p', {})).toEqual({
      kind: 'provider',
      provider: 'openai',
      config: { baseURL: 'http://127.0.0.1:11434/v1' },
    })
    expect(() => chooseModel({}, {}, '/w', '/p', {})).toThrow('no model configured')
  })
})

describe('the command table', () => {
  it('selects the longest matching name, so a subcommand is one more entry', () => {
    const session = { name: 'session', summary: '', usage: '', options: {}, run: async () => 0 }
    const exportCommand = { name: 'session export', summary: '', usage: '', options: {}, run: async () => 0 }
    const table = [...commands, session, exportCommand]
    expect(findCommand(['session', 'export', '--json'], table)).toEqual({ command: exportCommand, words: 2 })
    expect(findCommand(['session', 'list'], table)).toEqual({ command: session, words: 1 })
    expect(findCommand(['run', 'x'], table)?.command.name).toBe('run')
    expect(findCommand(['mcp', 'serve', '--http', '3000'])?.command.name).toBe('mcp serve')
    expect(findCommand(['mcp'])).toBeUndefined()
  })
})

describe('resolvePlugins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cordage-resolve-'))
  writeFileSync(join(dir, 'empty.mjs'), 'export {}\n')
  writeFileSync(join(dir, 'real.mjs'), 'export const name = "real"\nexport function apply() {}\n')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('skips a module that exports no plugin when asked (the preset), and names it otherwise', async () => {
    const entries = [
      { spec: './empty.mjs', config: undefined },
      { spec: './real.mjs', config: undefined },
    ]
    expect((await resolvePlugins(entries, dir, 'default preset', { skipPlaceholders: true })).map((entry) => entry.spec)).toEqual(['./real.mjs'])
    await expect(resolvePlugins(entries, dir, 'cordage.yml')).rejects.toThrow('cordage.yml: plugin ./empty.mjs: the package exports no Cordis plugin')
  })
})
