import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { cordage, echoPlugin, project } from './helpers.js'

/** Whether the terminal plugin's optional native dependency loads here (it may not have built). */
function ptyLoads(): boolean {
  try {
    createRequire(import.meta.resolve('@cordage/plugin-terminal'))('node-pty')
    return true
  } catch {
    return false
  }
}

describe.concurrent('cordage tools', { timeout: 90_000 }, () => {
  it('--json prints every registered tool with its parameters and output schema', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  - ./echo.mjs\n', 'echo.mjs': echoPlugin })
    const result = await cordage(['tools', '--json'], { cwd: dir })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual([
      {
        name: 'echo',
        description: 'Repeats what it is told.',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
        outputSchema: { type: 'object', properties: { said: { type: 'string' } }, required: ['said'], additionalProperties: false },
      },
    ])
  })

  it('lists name and description per line without --json', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  - ./echo.mjs\n', 'echo.mjs': echoPlugin })
    const result = await cordage(['tools'], { cwd: dir })
    expect(result).toMatchObject({ code: 0, stdout: 'echo  Repeats what it is told.\n' })
    expect(result.stderr).toContain('1 tool from ./echo.mjs')
  })

  it('loads the first-party tool families with no cordage.yml', async () => {
    const result = await cordage(['tools', '--json'], { cwd: project() })
    expect(result.code).toBe(0)
    const names = (JSON.parse(result.stdout) as Array<{ name: string }>).map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(['read', 'write', 'edit', 'glob', 'grep', 'bash', 'job_output', 'job_list', 'job_kill', 'web_fetch']))
    expect(names).not.toContain('web_search')
    expect(names).not.toContain('lsp')
    expect(names.filter((name) => name.startsWith('terminal_'))).toEqual([])
  })

  it.skipIf(!ptyLoads())('adds the terminal tools when cordage.yml names the plugin (skipped where node-pty did not build)', async () => {
    const result = await cordage(['tools'], { cwd: project({ 'cordage.yml': 'plugins:\n  terminal: {}\n' }) })
    expect(result.code).toBe(0)
    expect(
      result.stdout
        .split('\n')
        .map((line) => line.split(' ')[0])
        .filter(Boolean),
    ).toEqual(['terminal_close', 'terminal_list', 'terminal_open', 'terminal_read', 'terminal_send', 'terminal_signal'])
  })
})
