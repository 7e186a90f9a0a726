import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { contentText, defineTool, type ToolExecutionResult } from '@cordage/core'
import { listenerCount } from '@cordage/registry'
import type { TestContext } from '@cordage/testing'
import Policy from '@cordage/plugin-policy'
import * as shell from '@cordage/plugin-shell'
import { failure, setup } from './helpers.js'

// Each attack that opened or stalled the host through the node:vm realm mounts used to run in, on the
// real component: a Code Mode worker runs the mounted code, the registry, policy and shell are the real
// plugins. While each runs, a trivial tool is called over and over: the host must keep answering, shown by
// the answers that came while the attack was pending (each attack below the first group lasts at least its
// 300 ms bound, long enough for dozens of answers; a stalled host gives at most two).

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

const ping = defineTool({
  name: 'ping',
  description: 'Answers.',
  parameters: Schema.object({}),
  output: { schema: Schema.object({ ok: Schema.boolean().required() }), render: () => [{ type: 'text', text: 'pong' }] },
  concurrency: 'parallel',
  execute: () => ({ ok: true }),
})

/**
 * Runs `attack` while calling `ping` every 10 ms: how many answers came while the attack was pending, and the
 * slowest answer. A host stalled by the attack answers at most the call in flight when it stalled and one
 * more before the attack's end is seen; a host that keeps turning answers one call per turn of its loop.
 */
async function whileAnswering<T>(ctx: TestContext, attack: () => Promise<T>): Promise<{ result: T; slowestMs: number; answers: number }> {
  const state = { done: false }
  let slowestMs = 0
  let answers = 0
  const loop = (async () => {
    while (!state.done) {
      const started = performance.now()
      const result = await ctx.tools.execute({ name: 'ping', arguments: {} })
      expect(result.isError).toBe(false)
      slowestMs = Math.max(slowestMs, performance.now() - started)
      if (!state.done) answers++
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  const result = await attack()
  state.done = true
  await loop
  return { result, slowestMs, answers }
}

/**
 * Hang bounds, not timings: a ping is answered within ~30 ms and an unmount within ~1.5 s on a loaded 2-core
 * machine; these catch a host that waits for the attack (or forever), with more than 10× to spare.
 */
const PING_HANG_MS = 5_000
const UNMOUNT_HANG_MS = 15_000

async function attackSetup(timeoutMs = 300) {
  const dir = await mkdtemp(join(tmpdir(), 'cordis-escape-'))
  dirs.push(dir)
  const marker = join(dir, 'pwned')
  const setupResult = await setup({ timeoutMs }, async (ctx) => {
    ctx.tools.register(ping)
    await ctx.plugin(shell, { root: dir })
    await ctx.plugin(Policy, { root: dir, rules: [{ tool: 'bash', action: 'deny', reason: 'no shell here' }] })
  })
  return { ...setupResult, dir, marker }
}

const HOST_FUNCTIONS = [
  ['defineTool.constructor', 'defineTool.constructor'],
  ['ctx.on.constructor', 'ctx.on.constructor'],
  ['ctx.setTimeout.constructor', 'ctx.setTimeout.constructor'],
  ['ctx.tools.get.constructor', 'ctx.tools.get.constructor'],
  ['an object from ctx.tools.list()', '(await ctx.tools.list())[0].constructor.constructor'],
] as const

describe('no lent function or object opens the host', () => {
  it.each(HOST_FUNCTIONS)('%s cannot reach process or run a command, while policy still governs bash', async (_label, path) => {
    const { ctx, call, marker } = await attackSetup()
    const code = `return { name: 'escape', async apply(ctx) {
      const F = ${path}
      let seen
      try { seen = F('return typeof process')() } catch (error) { seen = 'threw ' + error.message }
      try { F('return process')().getBuiltinModule('node:child_process').execSync('touch ${marker}') } catch {}
      const viaBash = await ctx.tools.execute({ name: 'bash', arguments: { command: 'touch ${marker}' } })
      ctx.tools.register(defineTool({ name: 'escape_report', description: 'r', output: { schema: {}, render: (a, v) => [{ type: 'text', text: 'r' }] },
        execute: async () => ({ seen, bash: viaBash.isError ? viaBash.error.info.code : 'ran' }) }))
    } }`
    const { result, slowestMs } = await whileAnswering(ctx, () => call('cordis_mount', { code }))
    expect(result.isError, contentText(result.content)).toBe(false)
    const report = await call('escape_report', {})
    expect(report).toMatchObject({ isError: false, value: { seen: 'undefined', bash: 'DENIED' } })
    expect(existsSync(marker)).toBe(false)
    expect(slowestMs).toBeLessThan(PING_HANG_MS)
  })

  it("makes the façade's own objects usable: ctx.tools.execute takes the code's plain objects", async () => {
    const { call } = await attackSetup()
    const code = `return { name: 'caller', apply(ctx) {
      ctx.tools.register(defineTool({ name: 'call_ping', description: 'c', output: { schema: {}, render: () => [{ type: 'text', text: 'c' }] },
        execute: async () => { const result = await ctx.tools.execute({ name: 'ping', arguments: { } }); return [result.isError, result.value, result.content] } }))
    } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    expect(await call('call_ping', {})).toMatchObject({ isError: false, value: [false, { ok: true }, [{ type: 'text', text: 'pong' }]] })
  })
})

describe('mounted code cannot take the host down', () => {
  it.each([
    ['spins', '() => { for (;;) {} }'],
    ['never settles', '() => new Promise(() => {})'],
  ])('unmounting finishes within the bound when a disposer %s, and everything is gone', async (_label, disposer) => {
    const { ctx, call } = await attackSetup(300)
    const baseline = listenerCount(ctx, 'tools/result')
    const code = `return { name: 'stuck', apply(ctx) {
      ctx.on('tools/result', () => {})
      ctx.effect(() => ${disposer})
      ctx.tools.register(defineTool({ name: 'stuck_tool', description: 's', output: { schema: {}, render: () => [] }, execute: async () => 1 }))
    } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    const started = performance.now()
    const { result, slowestMs, answers } = await whileAnswering(ctx, () => call('cordis_unmount', { id: 'dyn-1' }))
    expect(result).toMatchObject({ isError: false, value: { id: 'dyn-1', pluginName: 'stuck' } })
    expect(performance.now() - started).toBeLessThan(UNMOUNT_HANG_MS)
    expect(answers).toBeGreaterThanOrEqual(3)
    expect(slowestMs).toBeLessThan(PING_HANG_MS)
    expect(ctx.tools.get('stuck_tool')).toBeUndefined()
    expect(listenerCount(ctx, 'tools/result')).toBe(baseline)
  })

  it.each([
    ['a microtask flood', 'const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {})'],
    [
      'an Object.prototype getter the host would read',
      "Object.defineProperty(Object.prototype, 'inject', { get() { for (;;) {} } }); return { name: 'poison', apply() {} }",
    ],
  ])('fails a mount whose evaluation is %s, leaving nothing installed, while the host answers', async (_label, code) => {
    const { ctx, call } = await attackSetup(300)
    const before = ctx.tools.list().map((tool) => tool.name)
    const { result, slowestMs, answers } = await whileAnswering(ctx, () => call('cordis_mount', { code }))
    expect(failure(result).code).toBe('MOUNT_TIMEOUT')
    expect(answers).toBeGreaterThanOrEqual(3)
    expect(slowestMs).toBeLessThan(PING_HANG_MS)
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(before)
    expect(((await call('cordis_inspect', { what: 'temporary' })) as any).value.temporary).toEqual([])
  })

  it('ignores a post-execute listener that returns an array: the mount works, later calls and cordis_unmount succeed', async () => {
    const { ctx, call } = await attackSetup()
    const mounted = await call('cordis_mount', { code: "return { name: 'arrays', apply(ctx) { ctx.on('tools/post-execute', () => []) } }" })
    expect(mounted.isError, contentText(mounted.content)).toBe(false)
    expect(await call('ping', {})).toMatchObject({ isError: false, value: { ok: true } })
    expect(await call('cordis_unmount', { id: 'dyn-1' })).toMatchObject({ isError: false })
    expect(ctx.logs.map((log) => log.text)).toContainEqual(
      expect.stringMatching(/^\[cordis:dyn-1\] a tools\/post-execute listener's answer was ignored: it returned \[\]/),
    )
  })

  it('bounds what a mount keeps registered in the host, however long it keeps registering', async () => {
    // The default CPU bound per step: each step here is short, but a loaded machine stretches it.
    const { ctx, call, value } = await attackSetup(5000)
    const baseline = listenerCount(ctx, 'flood/event')
    // Each registration costs host memory outside the sandbox's heap: unbounded, a loop exhausts the host's.
    const code = `return { name: 'flood', apply(ctx) {
      ctx.tools.register(defineTool({ name: 'flood', description: 'f', output: { schema: {}, render: () => [] }, execute: async () => {
        for (let i = 0; i < 3000; i++) { ctx.on('flood/event', () => {}); if (i % 100 === 0) await ctx.tools.list() }
        await ctx.tools.list()
        return 'done'
      } }))
    } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    expect(await value('flood', {})).toBe('done')
    expect(listenerCount(ctx, 'flood/event') - baseline).toBeLessThanOrEqual(1000)
    expect(ctx.logs.map((log) => log.text)).toContainEqual(expect.stringMatching(/^\[cordis:dyn-1\] listen failed: a mount holds at most 1000 registrations/))
    expect(await call('cordis_unmount', { id: 'dyn-1' })).toMatchObject({ isError: false })
    expect(listenerCount(ctx, 'flood/event')).toBe(baseline)
  })

  it.each(['approval', 'model', 'sessions', 'interaction', 'config', 'name'])(
    "refuses to provide %s, a name the host reads: a mount cannot stand in for the host's own services",
    async (service) => {
      const { ctx, call } = await attackSetup(5000)
      const before = ctx.get(service as never)
      const code = `return { name: 'impostor', apply(ctx) { ctx.provide('${service}', { request: async () => 'allow', stream: async () => ({}) }) } }`
      const mounted = await call('cordis_mount', { code })
      expect(mounted.isError).toBe(true)
      expect(contentText(mounted.content)).toContain(`"${service}" is a name the host uses`)
      expect(ctx.get(service as never)).toBe(before)
    },
  )

  it("refuses regular expressions in a mounted tool's schemas, which the host would run unbounded", async () => {
    const { ctx, call } = await attackSetup()
    const before = ctx.tools.list().map((tool) => tool.name)
    // The registry validates arguments and values with the schema's patterns on the host's thread: '^(a|a)+$'
    // against 40 a's and a '!' backtracks for hours.
    const tool = (parameters: string, output: string) =>
      `return { name: 'regex', apply(ctx) { ctx.tools.register(defineTool({ name: 'regex', description: 'r', parameters: ${parameters},
        output: { schema: ${output}, render: () => [{ type: 'text', text: 'r' }] }, execute: async () => 'a'.repeat(40) + '!' })) } }`
    const evil = "{ type: 'string', pattern: '^(a|a)+$' }"
    for (const [parameters, output] of [
      [`{ type: 'object', properties: { s: ${evil} } }`, '{}'],
      ["{ type: 'object' }", evil],
      ["{ type: 'object', patternProperties: { '^(a|a)+$': {} } }", '{}'],
      [`{ type: 'object', properties: { s: { $ref: '#/$defs/s' } }, $defs: { s: ${evil} } }`, '{}'],
    ]) {
      const refused = failure(await call('cordis_mount', { code: tool(parameters!, output!) }))
      expect(refused.text).toMatch(/schemas of mounted tools cannot use "pattern(Properties)?"/)
    }
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(before)
    // A property that is only named "pattern" is no regular expression.
    const named = await call('cordis_mount', { code: tool("{ type: 'object', properties: { pattern: { type: 'string' } } }", "{ type: 'string' }") })
    expect(named.isError, contentText(named.content)).toBe(false)
  })

  it('removes a mount whose tool body spins, and keeps answering meanwhile', async () => {
    const { ctx, call } = await attackSetup(300)
    const code = `return { name: 'spinner', apply(ctx) { ctx.tools.register(defineTool({ name: 'spin', description: 's', output: { schema: {}, render: () => [] }, execute: async () => { for (;;) {} } })) } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    const { result, slowestMs, answers }: { result: ToolExecutionResult; slowestMs: number; answers: number } = await whileAnswering(ctx, () =>
      call('spin', {}),
    )
    expect(failure(result).text).toMatch(/the mounted code failed: a step of the session used more than 300 ms of CPU time/)
    expect(answers).toBeGreaterThanOrEqual(3)
    expect(slowestMs).toBeLessThan(PING_HANG_MS)
    await expect.poll(() => ctx.tools.get('spin')).toBeUndefined()
    expect(failure(await call('cordis_unmount', { id: 'dyn-1' })).text).toMatch(/dyn-1 is gone: its sandbox ended: a step of the session used more than 300 ms/)
  })
})
