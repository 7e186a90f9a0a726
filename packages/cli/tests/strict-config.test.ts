import { describe, expect, it } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as CodeMode from '@cordage/plugin-code-mode'
import * as CordisTools from '@cordage/plugin-cordis-tools'
import * as Fs from '@cordage/plugin-fs'
import * as Hooks from '@cordage/plugin-hooks'
import { Jobs } from '@cordage/plugin-jobs'
import * as McpClient from '@cordage/plugin-mcp-client'
import * as McpServer from '@cordage/plugin-mcp-server'
import { OpenAIModel } from '@cordage/plugin-model-openai'
import * as Policy from '@cordage/plugin-policy'
import * as Shell from '@cordage/plugin-shell'
import { Spill } from '@cordage/plugin-spill'
import * as Terminal from '@cordage/plugin-terminal'
import { Subagents } from '@cordage/plugin-subagent'
import * as Workflow from '@cordage/plugin-workflow'
import { Web } from '@cordage/plugin-web'
import * as Lsp from '@cordage/plugin-lsp'

// Every first-party plugin, loaded through a real Context with a one-letter typo in its config.
const table: Array<[string, object, Record<string, unknown>, string, string]> = [
  ['spill', Spill, { maxInlineByte: 10_000 }, 'maxInlineByte', 'maxInlineBytes'],
  ['policy', Policy, { rulez: [] }, 'rulez', 'rules'],
  ['hooks', Hooks, { settingFile: 'x.json' }, 'settingFile', 'settingsFile'],
  ['code-mode', CodeMode, { maxCall: 3 }, 'maxCall', 'maxCalls'],
  ['mcp-client', McpClient, { name: 'x', transport: 'stdio', command: 'true', argz: [] }, 'argz', 'args'],
  ['mcp-server', McpServer, { prot: 0 }, 'prot', 'port'],
  ['model-openai', OpenAIModel, { baseURL: 'http://127.0.0.1:1/v1', modle: 'x' }, 'modle', 'model'],
  ['fs', Fs, { rooot: '.' }, 'rooot', 'root'],
  ['shell', Shell, { maxTimeoutMS: 10 }, 'maxTimeoutMS', 'maxTimeoutMs'],
  ['jobs', Jobs, { headChar: 10 }, 'headChar', 'headChars'],
  ['subagent', Subagents, { agents: { reviewer: { description: 'Reviews.', tool: ['read'] } } }, 'tool', 'tools'],
  ['workflow', Workflow, { maxAgent: 3 }, 'maxAgent', 'maxAgents'],
  ['cordis-tools', CordisTools, { timeoutMS: 10 }, 'timeoutMS', 'timeoutMs'],
  ['web', Web, { maxByte: 10_000 }, 'maxByte', 'maxBytes'],
  ['lsp', Lsp, { servers: [{ name: 'ts', command: 'x', glob: ['*'], languageId: 'ts' }] }, 'glob', 'globs'],
  ['terminal', Terminal, { idleTimeoutMS: 10 }, 'idleTimeoutMS', 'idleTimeoutMs'],
]

describe('strict config in every plugin', () => {
  it.each(table)(
    '%s: an unknown key fails the load with INVALID_CONFIG, naming the plugin, the key and the nearest valid key',
    async (name, plugin, config, key, nearest) => {
      const ctx = await createTestContext({ print: false })
      const error = await ctx.plugin(plugin as never, config as never).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(error).toMatchObject({ code: 'INVALID_CONFIG' })
      expect((error as Error).message).toMatch(new RegExp(`^${name}: (\\S+: )?unknown key "${key}"; did you mean "${nearest}"\\?`))
    },
  )

  it('a wrong type is INVALID_CONFIG too, not a bare validation error', async () => {
    const ctx = await createTestContext({ print: false })
    const error = await ctx.plugin(Fs, { root: 42 } as never).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', message: 'fs: root: expected string but got 42' })
  })
})
