import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { contentText, defineTool } from '@cordage/core'
import type { TestContext } from '@cordage/testing'
import Policy from '@cordage/plugin-policy'
import { failure, setup } from './helpers.js'

const ping = defineTool({
  name: 'ping',
  description: 'Answers.',
  parameters: Schema.object({ text: Schema.string() }),
  output: { schema: Schema.object({ echo: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: `pong ${value.echo}` }] },
  execute: (args) => ({ echo: args.text ?? '' }),
})

const withPing = (ctx: TestContext) => void ctx.tools.register(ping)

describe('mounted listeners', () => {
  it('decide calls from the JSON view of exec, and their decisions apply', async () => {
    const { call } = await setup({}, withPing)
    const code = `return { name: 'guard', apply(ctx) {
      ctx.on('tools/pre-execute', (exec, next) => exec.name === 'ping' && exec.arguments.text === 'secret' ? { kind: 'deny', reason: 'not that word' } : next())
      ctx.on('tools/post-execute', async (exec, result, next) => exec.name === 'ping' && exec.direct ? { kind: 'accept', content: [{ type: 'text', text: 'seen ' + result.value.echo }] } : next())
    } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    expect(failure(await call('ping', { text: 'secret' }))).toMatchObject({ code: 'DENIED', text: 'Error: not that word' })
    expect(await call('ping', { text: 'hi' })).toMatchObject({ isError: false, value: { echo: 'hi' }, content: [{ type: 'text', text: 'seen hi' }] })
  })

  it('can only tighten: a prepended allow does not skip a policy ask, a prepended accept does not undo a policy block', async () => {
    const asked: string[] = []
    const { call } = await setup({}, async (ctx) => {
      withPing(ctx)
      ctx.provide('approval', { request: async (exec) => (asked.push(exec.name), 'deny') })
      await ctx.plugin(Policy, {
        rules: [
          { tool: 'ping', when: [{ pointer: '/text', equals: 'ask' }], action: 'ask', reason: 'asks' },
          { tool: 'ping', when: [{ pointer: '/text', equals: 'block' }], action: 'block', feedback: 'policy blocked it' },
        ],
      })
    })
    const code = `return { name: 'lax', apply(ctx) {
      ctx.on('tools/pre-execute', () => ({ kind: 'allow' }), true)
      ctx.on('tools/post-execute', () => ({ kind: 'accept', content: [{ type: 'text', text: 'all fine' }] }), true)
    } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    expect(failure(await call('ping', { text: 'ask' })).code).toBe('DENIED')
    expect(asked).toEqual(['ping'])
    expect(failure(await call('ping', { text: 'block' })).text).toBe('policy blocked it')
    expect(await call('ping', { text: 'ok' })).toMatchObject({ isError: false, content: [{ type: 'text', text: 'all fine' }] })
  })

  it('never hold the call: a listener that spins or never settles leaves it to the rest of the chain within the bound', async () => {
    const { ctx, call } = await setup({ timeoutMs: 300 }, withPing)
    expect(
      (await call('cordis_mount', { code: "return { name: 'slow', apply(ctx) { ctx.on('tools/pre-execute', () => new Promise(() => {})) } }" })).isError,
    ).toBe(false)
    // Hang bounds, not timings: each call takes the 300 ms bound plus well under a second on a loaded machine;
    // a call held by the listener would take the test's own timeout.
    const HANG_MS = 10_000
    let started = performance.now()
    expect(await call('ping', { text: 'a' })).toMatchObject({ isError: false, value: { echo: 'a' } })
    expect(performance.now() - started).toBeLessThan(HANG_MS)
    expect((await call('cordis_mount', { code: "return { name: 'spin', apply(ctx) { ctx.on('tools/post-execute', () => { for (;;) {} }) } }" })).isError).toBe(
      false,
    )
    started = performance.now()
    expect(await call('ping', { text: 'b' })).toMatchObject({ isError: false, value: { echo: 'b' } })
    expect(performance.now() - started).toBeLessThan(HANG_MS)
    const warnings = ctx.logs.map((log) => log.text)
    expect(warnings).toContainEqual(expect.stringMatching(/^\[cordis:dyn-1\] a tools\/pre-execute listener failed \(the code did not finish within 300 ms\)/))
    expect(warnings).toContainEqual(expect.stringMatching(/^\[cordis:dyn-2\] removed: its sandbox ended: a step of the session used more than 300 ms/))
  })

  it('do not see cordis_unmount: a mount that denies everything can still be removed', async () => {
    const { call } = await setup({}, withPing)
    expect(
      (await call('cordis_mount', { code: "return { name: 'wall', apply(ctx) { ctx.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'wall' })) } }" }))
        .isError,
    ).toBe(false)
    expect(failure(await call('ping', {})).text).toBe('Error: wall')
    expect(await call('cordis_unmount', { id: 'dyn-1' })).toMatchObject({ isError: false })
    expect(await call('ping', {})).toMatchObject({ isError: false })
  })
})

describe('mounted tools', () => {
  it('keep presentationMeta on direct calls, render in the sandbox, and show a replaced value as JSON', async () => {
    const { call } = await setup({}, async (ctx) => {
      await ctx.plugin(Policy, { rules: [{ tool: 'measure', when: [{ pointer: '/text', equals: 'redact' }], action: 'redact-value', pointers: ['/length'] }] })
    })
    const code = `return { name: 'meter', apply(ctx) {
      ctx.tools.register(defineTool({ name: 'measure', description: 'Measures text.',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        output: { schema: { type: 'object', properties: { length: { type: 'integer' } } },
          render: (args, value) => [{ type: 'text', text: args.text + ' is ' + value.length + ' long' }],
          presentationMeta: (args, value) => ({ kind: 'measure', doubled: value.length * 2 }) },
        execute: async (args) => ({ length: args.text.length }) }))
    } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    const direct = await call('measure', { text: 'four' })
    expect(direct).toMatchObject({
      isError: false,
      value: { length: 4 },
      content: [{ type: 'text', text: 'four is 4 long' }],
      meta: { kind: 'measure', doubled: 8 },
    })
    const redacted = await call('measure', { text: 'redact' })
    expect(redacted).toMatchObject({ isError: false, value: {} })
    expect(contentText(redacted.content)).toBe('{}')
  })

  it('report a body that throws, a renderer that throws and a value that is not JSON as failures of the call', async () => {
    const { call } = await setup()
    const tool = (name: string, execute: string, render = "() => [{ type: 'text', text: 'ok' }]") =>
      `ctx.tools.register(defineTool({ name: '${name}', description: 'd', output: { schema: {}, render: ${render} }, execute: ${execute} }))`
    const code = `return { name: 'broken', apply(ctx) {
      ${tool('throws', "async () => { throw new Error('body broke') }")}
      ${tool('bad_render', 'async () => 1', "() => { throw new Error('render broke') }")}
      ${tool('not_json', 'async () => () => 1')}
    } }`
    expect((await call('cordis_mount', { code })).isError).toBe(false)
    expect(failure(await call('throws', {})).text).toBe('Error: body broke')
    expect(failure(await call('bad_render', {})).text).toContain('render broke')
    expect(failure(await call('not_json', {})).text).toMatch(/not JSON/)
  })
})
