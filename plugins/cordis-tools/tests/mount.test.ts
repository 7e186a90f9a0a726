import { describe, expect, it } from 'vitest'
import { contentText, type ToolExecutionResult } from '@cordage/core'
import { testToolContract } from '@cordage/testing'
import Policy from '@cordage/plugin-policy'
import * as cordisTools from '../src/index.js'
import { failure, probeCode, setup } from './helpers.js'

testToolContract(cordisTools, {
  cases: [
    { tool: 'cordis_inspect', arguments: {} },
    { tool: 'cordis_inspect', arguments: { what: 'events' } },
    { tool: 'cordis_inspect', arguments: { what: 'tools', name: 'nope' }, expect: 'error' },
    { tool: 'cordis_mount', arguments: { code: 'return (' }, expect: 'error' },
    { tool: 'cordis_unmount', arguments: { id: 'dyn-404' }, expect: 'error' },
  ],
})

const ECHO = `return {
  name: 'echo-plugin',
  apply(ctx) {
    ctx.tools.register(defineTool({
      name: 'echo_upper',
      description: 'Echoes text in capitals.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      output: { schema: { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] }, render: (args, value) => [{ type: 'text', text: value.upper }] },
      execute: async (args) => ({ upper: args.text.toUpperCase() }),
    }))
  },
}`

describe('cordis_mount', () => {
  it('mounts a tool that runs through the full pipeline, then unmounts it', async () => {
    const { ctx, call } = await setup()
    const mounted = await call('cordis_mount', { code: ECHO })
    expect(mounted).toMatchObject({ isError: false, value: { id: 'dyn-1', pluginName: 'echo-plugin', state: 'active', provides: [], waitingFor: [] } })
    expect(contentText(mounted.content)).toBe('Temporary plugin dyn-1 is active (plugin "echo-plugin"; available until cordis_unmount or the runtime stops).')
    const echoed = await call('echo_upper', { text: 'hi' })
    expect(echoed).toMatchObject({ isError: false, value: { upper: 'HI' }, content: [{ type: 'text', text: 'HI' }] })
    expect(Object.isFrozen(echoed.isError ? undefined : echoed.value)).toBe(true)
    expect(failure(await call('echo_upper', { text: 1 })).code).toBe('INVALID_ARGS')
    expect(await call('cordis_unmount', { id: 'dyn-1' })).toMatchObject({ isError: false, value: { id: 'dyn-1', pluginName: 'echo-plugin' } })
    expect(ctx.tools.get('echo_upper')).toBeUndefined()
    expect(failure(await call('cordis_unmount', { id: 'dyn-1' })).code).toBe('UNKNOWN_MOUNT')
    // Ids are never reused.
    expect(await call('cordis_mount', { code: ECHO })).toMatchObject({ value: { id: 'dyn-2' } })
  })

  it('applies policy to mounted tools like any other', async () => {
    const { ctx, call } = await setup()
    await ctx.plugin(Policy, { rules: [{ tool: 'echo_upper', action: 'deny', reason: 'not this one' }] })
    await call('cordis_mount', { code: ECHO })
    const denied = failure(await call('echo_upper', { text: 'hi' }))
    expect(denied).toMatchObject({ code: 'DENIED' })
    expect(denied.text).toContain('not this one')
  })

  it('reports syntax errors with the line, a caret and a hint', async () => {
    const { call } = await setup()
    const plain = failure(await call('cordis_mount', { code: 'const a = 1\nreturn (a +\n' }))
    expect(plain.code).toBe('MOUNT_SYNTAX')
    const typed = failure(await call('cordis_mount', { code: 'const n: number = 1\nreturn () => {}' }))
    expect(typed.text).toMatch(/syntax error at line 1: .*\n {2}const n: number = 1\n {2}\s*\^/)
    expect(typed.text).toContain('plain JavaScript, not TypeScript')
  })

  it.each([
    ['returns nothing', 'const x = 1', 'MOUNT_NOT_A_PLUGIN', 'the code returned nothing'],
    ['returns a number', 'return 42', 'MOUNT_NOT_A_PLUGIN', 'the code returned number, not a plugin'],
    ['throws while evaluating', 'throw new Error("nope")', 'MOUNT_FAILED', 'evaluating the code threw: nope'],
    ['throws in apply', 'return { name: "bad", apply() { throw new Error("apply broke") } }', 'MOUNT_FAILED', 'apply threw: apply broke'],
  ])('rolls back code that %s', async (_label, code, expected, message) => {
    const { ctx, call } = await setup()
    const before = ctx.tools.list().map((tool) => tool.name)
    const result = failure(await call('cordis_mount', { code }))
    expect(result.code).toBe(expected)
    expect(result.text).toContain(message)
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(before)
    expect(
      (await call('cordis_inspect', { what: 'temporary' })).isError
        ? undefined
        : ((await call('cordis_inspect', { what: 'temporary' })) as any).value.temporary,
    ).toEqual([])
  })

  it('rolls back a name collision and leaves the original tool intact', async () => {
    const { ctx, call } = await setup()
    await call('cordis_mount', { code: ECHO })
    const original = ctx.tools.get('echo_upper')
    const clash = failure(await call('cordis_mount', { code: ECHO.replace("'echo-plugin'", "'copycat'").replace('value.upper }]', "'copy' }]") }))
    expect(clash.code).toBe('MOUNT_FAILED')
    expect(clash.text).toMatch(/copycat.*rolled back/)
    expect(ctx.tools.get('echo_upper')).toBe(original)
    expect(await call('echo_upper', { text: 'x' })).toMatchObject({ content: [{ type: 'text', text: 'X' }] })
  })
})

describe('the sandbox and the façade', () => {
  async function probe(call: (name: string, args: Record<string, unknown>) => Promise<ToolExecutionResult>, body: string): Promise<unknown> {
    const mounted = await call('cordis_mount', { code: probeCode(body) })
    expect(mounted.isError, contentText(mounted.content)).toBe(false)
    const result = await call('probe_result', {})
    return result.isError ? { error: result.error.message } : result.value
  }

  it('has no process, require, Buffer, timers or fetch, and globalThis writes stay in the mount', async () => {
    const { call } = await setup()
    const seen = await probe(
      call,
      'globalThis.leak = 1; return [typeof process, typeof require, typeof Buffer, typeof setTimeout, typeof fetch, typeof globalThis.leak]',
    )
    expect(seen).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'number'])
    expect((globalThis as Record<string, unknown>).leak).toBeUndefined()
  })

  it.each([
    ['root access', 'return { name: "x", apply(ctx) { ctx.root.tools } }', 'ctx.root is withheld'],
    ['the plugin loader', 'return { name: "x", apply(ctx) { ctx.plugin({ apply() {} }) } }', 'ctx.plugin is withheld'],
    [
      'a raw tool definition',
      'return { name: "x", apply(ctx) { ctx.tools.register({ name: "raw", description: "r", parameters: { type: "object" }, output: { schema: {}, render: () => [] }, execute: () => 1 }) } }',
      'accepts only tools made with defineTool',
    ],
    ['an undeclared service', 'return { name: "x", apply(ctx) { ctx.get("model") } }', 'service model is not declared'],
    ['assignment', 'return { name: "x", apply(ctx) { ctx.tools = null } }', 'the context is read-only'],
  ])('denies %s and rolls back', async (_label, code, message) => {
    const { call } = await setup()
    const result = failure(await call('cordis_mount', { code }))
    expect(result.text).toContain(message)
  })

  it('lends no host service: declaring one fails the mount, and an undeclared name asks for inject', async () => {
    const { ctx, call } = await setup()
    ctx.provide('probe', { context: () => ctx, value: () => 7 })
    const declared = failure(await call('cordis_mount', { code: 'return { name: "x", inject: ["probe"], apply(ctx) { ctx.probe.context() } }' }))
    expect(declared.text).toContain('service probe is provided by the host, not by a mount')
    const undeclared = failure(await call('cordis_mount', { code: 'return { name: "x", apply(ctx) { ctx.probe } }' }))
    expect(undeclared.text).toContain("add it to the plugin's inject (inject: ['probe'])")
    expect((await call('cordis_inspect', { what: 'temporary' })) as any).toMatchObject({ value: { temporary: [] } })
  })

  it('stops a synchronous infinite loop in the code, in apply and in a tool body', async () => {
    const { ctx, call } = await setup({ timeoutMs: 200 })
    expect(failure(await call('cordis_mount', { code: 'for (;;) {}' })).code).toBe('MOUNT_TIMEOUT')
    expect(failure(await call('cordis_mount', { code: 'return { name: "spin", apply() { for (;;) {} } }' })).code).toBe('MOUNT_TIMEOUT')
    const spin = `return { name: 'spinner', apply(ctx) { ctx.tools.register(defineTool({ name: 'spin', description: 's', output: { schema: {}, render: () => [] }, execute: () => { for (;;) {} } })) } }`
    expect((await call('cordis_mount', { code: spin })).isError).toBe(false)
    const started = performance.now()
    const result = await call('spin', {})
    expect(result.isError).toBe(true)
    // A hang bound, not a timing: the 200 ms budget plus well under a second on a loaded machine.
    expect(performance.now() - started).toBeLessThan(10_000)
    // The host keeps answering.
    expect((await ctx.tools.execute({ name: 'cordis_inspect', arguments: { what: 'events' } })).isError).toBe(false)
  })
})
