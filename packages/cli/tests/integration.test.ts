import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Context, Fiber } from 'cordis'
import { contentText, type ToolExecutionResult } from '@cordage/core'
import { Spill } from '@cordage/plugin-spill'
import * as Policy from '@cordage/plugin-policy'
import * as Hooks from '@cordage/plugin-hooks'
import { Jobs } from '@cordage/plugin-jobs'
import * as Fs from '@cordage/plugin-fs'
import * as Shell from '@cordage/plugin-shell'
import * as CodeMode from '@cordage/plugin-code-mode'
import AgentService from '@cordage/agent'
import { hookTable } from '@cordage/registry/cordis-seam'
import { createTestContext, openFilesUnder, ScriptedModel, type ScriptStep } from '@cordage/testing'

// End-to-end checks of two promises across the real plugins loaded together, as `cordage` loads them:
// unloading removes every tool, listener, file and process; bad input gets a precise result and loses nothing.

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A fresh workspace with files grep finds on many lines, and a separate spill directory. */
function workspace(): { root: string; spillDir: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'cordage-integration-')))
  dirs.push(base)
  const root = join(base, 'project')
  mkdirSync(join(root, 'src'), { recursive: true })
  for (let file = 0; file < 6; file++) {
    const lines = Array.from({ length: 30 }, (_, line) => `const value${line} = ${file * 100 + line} // needle ${'x'.repeat(40)}`)
    writeFileSync(join(root, 'src', `mod${file}.ts`), lines.join('\n') + '\n')
  }
  return { root, spillDir: join(base, 'spill') }
}

type Entry = { key: string; plugin: any; config: unknown }

/** The plugin set of the default preset plus hooks, with configs that make every plugin install its listeners. */
function entries(root: string, spillDir: string): Entry[] {
  return [
    { key: 'spill', plugin: Spill, config: { dir: spillDir, maxInlineBytes: 1024, headBytes: 300, tailBytes: 300, deleteOnDispose: true } },
    {
      key: 'policy',
      plugin: Policy,
      config: {
        rules: [
          { tool: 'write', when: [{ pointer: '/path', glob: 'secret*' }], action: 'deny', reason: 'no secrets' },
          { tool: 'edit', when: [{ pointer: '/path', equals: 'never-edited.txt' }], action: 'block', feedback: 'blocked' },
        ],
      },
    },
    {
      key: 'hooks',
      plugin: Hooks,
      config: {
        cwd: root,
        hooks: {
          PreToolUse: [{ matcher: 'job_list', hooks: [{ type: 'command', command: 'true' }] }],
          PostToolUse: [{ matcher: 'job_list', hooks: [{ type: 'command', command: 'true' }] }],
        },
      },
    },
    { key: 'jobs', plugin: Jobs, config: {} },
    { key: 'fs', plugin: Fs, config: { root, pageSize: 5, pageBytes: 1000 } },
    { key: 'shell', plugin: Shell, config: { root, killGraceMs: 200 } },
    { key: 'code-mode', plugin: CodeMode, config: {} },
  ]
}

/** Listener counts of the raw events service, per event name (empty lists omitted). */
function listenerCounts(ctx: Context): Record<string, number> {
  const hooks = hookTable(ctx)
  const counts: Record<string, number> = {}
  for (const [name, list] of Object.entries(hooks)) if (list?.length) counts[name] = list.length
  return counts
}

const toolNames = (ctx: Context) => ctx.tools.list().map((tool) => tool.name)

/** Live (non-zombie) processes whose command line contains `marker`. */
function processesMatching(marker: string): number[] {
  const found: number[] = []
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
      if (!cmdline.includes(marker)) continue
      const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)\s+/, '')[0]
      if (state !== 'Z') found.push(Number(pid))
    } catch {
      // The process ended while being read.
    }
  }
  return found
}

async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

const textOf = (result: ToolExecutionResult) => contentText(result.content)

describe('disposal is total', () => {
  it('unloading each plugin in reverse order restores tools and listeners and leaves no process or open file', async () => {
    const { root, spillDir } = workspace()
    const ctx = await createTestContext({ print: false })
    const steps: Array<{ key: string; fiber: Fiber; toolsBefore: string[]; listenersBefore: Record<string, number> }> = []
    const load = async (key: string, plugin: any, config: unknown) => {
      const toolsBefore = toolNames(ctx)
      const listenersBefore = listenerCounts(ctx)
      steps.push({ key, fiber: await ctx.plugin(plugin, config as any), toolsBefore, listenersBefore })
    }
    const baselineTools = toolNames(ctx)
    const baselineListeners = listenerCounts(ctx)

    for (const { key, plugin, config } of entries(root, spillDir)) await load(key, plugin, config)
    await load('model', ScriptedModel, {
      turns: [
        {
          toolCalls: [
            { name: 'job_list', arguments: {} },
            { name: 'grep', arguments: { pattern: 'needle' } },
          ],
        },
        { text: 'done' },
      ] satisfies ScriptStep[],
    })
    await load('agent', AgentService, { cwd: root, persist: true })
    const loaded = toolNames(ctx)
    expect(loaded).toEqual(['bash', 'edit', 'glob', 'grep', 'job_kill', 'job_list', 'job_output', 'read', 'run_code', 'write'])
    expect(Object.keys(listenerCounts(ctx))).toEqual(expect.arrayContaining(['tools/pre-execute', 'tools/post-execute', 'tools/changed']))

    // A background job whose shell and `sleep` carry a unique marker on their command lines.
    const marker = `30.${process.pid}${Date.now() % 100_000}`
    const started = await ctx.tools.execute({ name: 'bash', arguments: { command: `sleep ${marker}`, run_in_background: true }, callId: 'bg' })
    expect(started.isError, textOf(started)).toBe(false)
    expect(await waitUntil(() => processesMatching(`sleep ${marker}`).length > 0, 5000)).toBe(true)

    // One agent turn: installs the agent's run observers, runs hooks, and spills a grep page.
    const agent = ctx.agent.create()
    const run = await agent.run('list jobs and grep')
    expect(run.stopReason).toBe('completed')
    const grepResult = agent.messages.find((message) => message.role === 'tool' && message.name === 'grep')
    expect(JSON.stringify(grepResult)).toContain(spillDir)
    // The session is left open on purpose: unloading the agent plugin must close it.
    const spillFiles = readdirSync(spillDir)
    expect(spillFiles.length).toBeGreaterThan(0)

    for (const step of steps.toReversed()) {
      await step.fiber.dispose()
      expect(toolNames(ctx), `tools after unloading ${step.key}`).toEqual(step.toolsBefore)
      expect(listenerCounts(ctx), `listeners after unloading ${step.key}`).toEqual(step.listenersBefore)
      // The background job belongs to the shell plugin: it dies with it, not later with the jobs service.
      if (step.key === 'shell') expect(processesMatching(`sleep ${marker}`), 'background job after unloading shell').toEqual([])
    }

    expect(toolNames(ctx)).toEqual(baselineTools)
    expect(listenerCounts(ctx)).toEqual(baselineListeners)
    expect(processesMatching(`sleep ${marker}`)).toEqual([])
    expect(processesMatching(root)).toEqual([])
    expect(openFilesUnder(spillDir)).toEqual([])
    expect(openFilesUnder(root)).toEqual([])
    // deleteOnDispose: every spill file this instance wrote is gone.
    expect(readdirSync(spillDir)).toEqual([])
    expect(ctx.get('spill')).toBeUndefined()
    expect(ctx.get('jobs')).toBeUndefined()
    expect(ctx.get('agent')).toBeUndefined()

    // The policy guard went with its plugin: a new `write` tool is not denied for `secret.txt`.
    await ctx.plugin(Fs, { root })
    const write = await ctx.tools.execute({ name: 'write', arguments: { path: 'secret.txt', content: 'ok' } })
    expect(write.isError, textOf(write)).toBe(false)
  })
})

describe('disposal in flight', () => {
  it('unloading while calls, a hook and a nested program are in flight settles every call and leaves no process', async () => {
    const { root, spillDir } = workspace()
    const ctx = await createTestContext({ print: false, registry: { timeoutGraceMs: 5000 } })
    const marker = `${process.pid}${Date.now() % 100_000}`
    const plan = entries(root, spillDir).map((entry) =>
      entry.key !== 'hooks'
        ? entry
        : {
            ...entry,
            config: { cwd: root, hooks: { PreToolUse: [{ matcher: 'Glob', hooks: [{ type: 'command', command: `sleep 31.${marker}` }] }] } },
          },
    )
    const baseline = listenerCounts(ctx)
    const fibers: Fiber[] = []
    for (const { plugin, config } of plan) fibers.push(await ctx.plugin(plugin, config as any))

    const calls = [
      ctx.tools.execute({ name: 'bash', arguments: { command: `sleep 32.${marker}` }, callId: 'fg' }),
      ctx.tools.execute({ name: 'glob', arguments: { pattern: '**/*.ts' }, callId: 'hooked' }),
      ctx.tools.execute({ name: 'run_code', arguments: { code: `return await tools.bash({ command: 'sleep 33.${marker}' })` }, callId: 'nested' }),
    ]
    const started = await waitUntil(() => [31, 32, 33].every((n) => processesMatching(`sleep ${n}.${marker}`).length > 0), 10_000)
    expect(started, `running: ${processesMatching(marker)}`).toBe(true)

    for (const fiber of fibers.toReversed()) await fiber.dispose()
    const results = await Promise.all(calls)
    // A command its plugin kills is a success value (the model reads how it ended), as the shell README says.
    const [foreground, hooked, nested] = results as [ToolExecutionResult, ToolExecutionResult, ToolExecutionResult]
    expect(foreground).toMatchObject({ isError: false, value: { kind: 'foreground', exitCode: null, signal: 'SIGTERM' } })
    expect(textOf(foreground)).toBe('Terminated by signal SIGTERM')
    // code-mode unloads first: that ends its program (ABORTED) and aborts the bash call it was awaiting.
    expect(nested).toMatchObject({ isError: true, error: { info: { code: 'ABORTED' } } })
    // The hook was killed (PreToolUse fails open), and by then the fs plugin had gone: the registry
    // refuses to run a body whose tool was unregistered meanwhile.
    expect(hooked.isError && hooked.error.info?.code).toBe('UNKNOWN_TOOL')
    expect(textOf(hooked)).toMatch(/^Error: tool "glob" was unregistered before the call could run; available: /)
    expect(processesMatching(marker)).toEqual([])
    expect(toolNames(ctx)).toEqual([])
    expect(listenerCounts(ctx)).toEqual(baseline)
    expect(openFilesUnder(root)).toEqual([])
  })
})

describe('bad input gets a clear error and loses nothing', () => {
  it('an agent turn with five bad calls completes and its session holds every result and no value', async () => {
    const { root, spillDir } = workspace()
    const ctx = await createTestContext({ print: false })
    const fibers: Fiber[] = []
    for (const { plugin, config } of entries(root, spillDir)) fibers.push(await ctx.plugin(plugin, config as any))
    fibers.push(
      await ctx.plugin(ScriptedModel, {
        turns: [
          {
            toolCalls: [
              { id: 'c_json', name: 'read', arguments: '{"path": "src/mod0.ts",' },
              { id: 'c_unknown', name: 'no_such_tool', arguments: {} },
              { id: 'c_outside', name: 'read', arguments: { path: '../../etc/passwd' } },
              { id: 'c_throw', name: 'run_code', arguments: { code: 'throw new Error("program-failure-7731")' } },
              { id: 'c_exit', name: 'bash', arguments: { command: 'echo out-5521; echo err-5521 >&2; exit 3' } },
            ],
          },
          { text: 'all handled' },
        ] satisfies ScriptStep[],
      }),
    )
    const model = ctx.get('model') as ScriptedModel
    fibers.push(await ctx.plugin(AgentService, { cwd: root, persist: true }))

    const agent = ctx.agent.create()
    const run = await agent.run('try everything')
    expect(run.stopReason).toBe('completed')
    expect(run.text).toBe('all handled')
    await agent.session!.close({ reason: run.stopReason })

    const results = new Map(agent.messages.filter((message) => message.role === 'tool').map((message: any) => [message.callId, message]))
    expect([...results.keys()]).toEqual(['c_json', 'c_unknown', 'c_outside', 'c_throw', 'c_exit'])
    const text = (id: string) => contentText(results.get(id).content)
    expect(results.get('c_json').isError).toBe(true)
    expect(text('c_json')).toMatch(/^Error: the arguments of read are not valid JSON \(.+\); send one JSON object/)
    expect(results.get('c_unknown').isError).toBe(true)
    expect(text('c_unknown')).toMatch(/^Error: unknown tool "no_such_tool"; available: .*\bread\b/)
    expect(results.get('c_outside').isError).toBe(true)
    expect(text('c_outside')).toMatch(/^Error: "\.\.\/\.\.\/etc\/passwd" is outside the workspace root /)
    expect(text('c_outside')).not.toContain('root:x:0')
    expect(results.get('c_throw').isError).toBe(true)
    expect(text('c_throw')).toMatch(/^Error: run_code failed \(runtime\): Error: program-failure-7731\n/)
    expect(results.get('c_exit').isError).toBe(false)
    expect(text('c_exit')).toBe('out-5521\n[stderr]\nerr-5521\nExit code 3')
    // The model's second request carried all five results.
    expect(model.requests[1]!.messages.filter((message) => message.role === 'tool')).toHaveLength(5)

    const lines = readFileSync(agent.session!.file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const logged = lines.filter((line) => line.type === 'tool/result').map((line) => line.data)
    expect(logged.map((data) => data.callId)).toEqual(['c_json', 'c_unknown', 'c_outside', 'c_throw', 'c_exit'])
    const codes = Object.fromEntries(logged.map((data) => [data.callId, data.isError ? data.error?.code : 'ok']))
    expect(codes).toEqual({ c_json: 'INVALID_ARGS', c_unknown: 'UNKNOWN_TOOL', c_outside: 'PATH_OUTSIDE_ROOT', c_throw: 'CODE_RUN_FAILED', c_exit: 'ok' })
    for (const data of logged) expect(contentText(data.content)).toBe(contentText(results.get(data.callId).content))
    expect(lines.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
    // No canonical values: no `value` key anywhere, and no field that only the bash value has.
    const file = readFileSync(agent.session!.file, 'utf8')
    expect(file).not.toMatch(/"value"\s*:/)
    expect(file).not.toContain('omittedBytes')
    expect(file).not.toContain('"exitCode"')
    for (const fiber of fibers.toReversed()) await fiber.dispose()
  })
})

describe('load order', () => {
  async function grepWith(order: Entry[]) {
    const ctx = await createTestContext({ print: false })
    const fibers: Fiber[] = []
    for (const { plugin, config } of order) fibers.push(await ctx.plugin(plugin, config as any))
    const tools = ctx.tools.list()
    const result = await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'needle' }, callId: 'grep_1' })
    // Over maxInlineBytes: bounded by the generic spill policy.
    const long = await ctx.tools.execute({ name: 'bash', arguments: { command: 'seq 1 3000' }, callId: 'bash_1' })
    const spillDir = (order.find((entry) => entry.key === 'spill')!.config as { dir: string }).dir
    const files = Object.fromEntries(readdirSync(spillDir).map((name) => [name, readFileSync(join(spillDir, name), 'utf8')]))
    for (const fiber of fibers.toReversed()) await fiber.dispose()
    expect(existsSync(spillDir) ? readdirSync(spillDir) : []).toEqual([])
    return { tools, result, long, files }
  }

  it('two load orders give the same tools and the same spilled grep result', async () => {
    const { root, spillDir } = workspace()
    const forward = entries(root, spillDir)
    const shuffled = [forward[4]!, forward[6]!, forward[5]!, forward[3]!, forward[2]!, forward[0]!, forward[1]!]
    const first = await grepWith(forward)
    const second = await grepWith(shuffled)
    expect(second.tools).toEqual(first.tools)
    expect(first.result.isError, textOf(first.result)).toBe(false)
    // The page is bounded: the grep projection saved the full list and generic spill kept the page within limits.
    expect(Buffer.byteLength(textOf(first.result))).toBeLessThanOrEqual(1024)
    expect(textOf(first.result)).toContain(spillDir)
    expect(first.long.isError, textOf(first.long)).toBe(false)
    expect(Buffer.byteLength(textOf(first.long))).toBeLessThanOrEqual(1024)
    expect(textOf(first.long)).toMatch(/^1\n2\n[^]*\(Omitted \d+ bytes\. Full output: .*bash-bash_1[^]*\n3000$/)
    expect(Object.keys(first.files).sort()).toEqual(['bash-bash_1-output.txt', 'grep-grep_1-matches.txt'])
    expect(first.files['grep-grep_1-matches.txt']!.split('\n').filter((line) => line.includes('needle'))).toHaveLength(180)
    expect(first.files['bash-bash_1-output.txt']).toBe(Array.from({ length: 3000 }, (_, i) => i + 1).join('\n'))
    expect(second.result).toEqual(first.result)
    // The bash value carries its wall-clock duration; everything else must match.
    const timeless = (result: ToolExecutionResult) => ({ ...result, ...(!result.isError && { value: { ...(result.value as object), durationMs: 0 } }) })
    expect(timeless(second.long)).toEqual(timeless(first.long))
    expect(second.files).toEqual(first.files)
  })
})
