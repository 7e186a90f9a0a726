import { describe, expect, it } from 'vitest'
import { CordageError, type JsonValue } from '@cordage/core'
import type { CodeRunner } from '@cordage/services'
import { lookup, setup, sleeper } from './helpers.js'

const service = (ctx: { get(name: 'codeMode'): CodeRunner | undefined }): CodeRunner => ctx.get('codeMode')!

describe('ctx.codeMode.run', () => {
  it('runs a program with host functions as extra async globals, beside the tools', async () => {
    const { ctx } = await setup([lookup])
    const seen: JsonValue[] = []
    const output = await service(ctx).run({
      code: `
        const reply = await agents.run({ prompt: 'hi' })
        const user = await tools.lookup({ id: 4 })
        console.log(typeof agents, Object.isFrozen(reply), Object.keys(globalThis).includes('agents'))
        return { reply, user: user.name, echoed: await echo('x') }
      `,
      host: {
        'agents.run': async (args) => (seen.push(args), { output: ['done'] }),
        echo: async (args) => args,
      },
    })
    expect(output).toEqual({ logs: ['object true false'], result: { reply: { output: ['done'] }, user: 'user-4', echoed: 'x' } })
    expect(seen).toEqual([{ prompt: 'hi' }])
  })

  it('dispatches nested tool calls with the given parent and agent', async () => {
    const { ctx, results } = await setup([lookup])
    const parent = Symbol('workflow')
    await service(ctx).run({ code: 'await tools.lookup({ id: 1 })', parent, agent: 'planner' })
    const nested = results.find((entry) => entry.exec.name === 'lookup')!
    expect(nested.exec.parent).toBe(parent)
    expect(nested.exec.agent).toBe('planner')
  })

  it('rejects a program call with ToolCallError (with the code and info of a CordageError) when a host function throws or returns non-JSON', async () => {
    const { ctx } = await setup([])
    const output = await service(ctx).run({
      code: `
        const errors = []
        for (const call of [() => fail({}), () => badValue({}), () => coded({})]) {
          try { await call() } catch (error) { errors.push([error.name, error.toolName, error.message, error.code, error.info ?? null]) }
        }
        return errors
      `,
      host: {
        fail: async () => {
          throw new Error('no agents left')
        },
        badValue: async () => ({ when: new Date(0) }) as any,
        coded: async () => {
          throw new CordageError('RUN_BUDGET_EXCEEDED', 'the budget is spent')
        },
      },
    })
    expect(output.result).toEqual([
      ['ToolCallError', 'fail', 'no agents left', 'TOOL_FAILED', null],
      ['ToolCallError', 'badValue', expect.stringMatching(/^\$\.when: .*not JSON/), 'NOT_JSON', { name: 'NotJsonError', code: 'NOT_JSON' }],
      ['ToolCallError', 'coded', 'the budget is spent', 'RUN_BUDGET_EXCEEDED', { name: 'CordageError', code: 'RUN_BUDGET_EXCEEDED' }],
    ])
  })

  const none = async (): Promise<null> => null
  it.each<[string, Record<string, any>, RegExp]>([
    ['bad path', { 'agents..run': none }, /not a dotted identifier path/],
    ['reserved root', { 'tools.extra': none }, /would replace the program's "tools"/],
    ['reserved name', { describeTool: none }, /would replace the program's "describeTool"/],
    ['non-configurable global', { 'undefined.x': none }, /would replace the program's "undefined"/],
    ['overlap', { agents: none, 'agents.run': none }, /overlap/],
    ['overlap past a sibling that sorts between', { agents: none, agents$x: none, 'agents.run.deep': none }, /"agents" and "agents.run.deep" overlap/],
    ['not a function', { agents: 1 }, /not a function/],
  ])('refuses host functions with a %s (INVALID_ARGS)', async (_label, host, message) => {
    const { ctx } = await setup([])
    await expect(service(ctx).run({ code: 'return 1', host })).rejects.toMatchObject({ code: 'INVALID_ARGS', message: expect.stringMatching(message) })
  })

  it('rejects with CODE_RUN_FAILED and the kind, or ABORTED when the signal aborts, aborting host calls', async () => {
    const { ctx } = await setup([sleeper('nap', 'parallel', [])])
    await expect(service(ctx).run({ code: 'console.log("a"); null.x' })).rejects.toMatchObject({ code: 'CODE_RUN_FAILED', kind: 'runtime', logs: ['a'] })
    const controller = new AbortController()
    let hostSignal: AbortSignal | undefined
    let called!: () => void
    const waiting = new Promise<void>((resolve) => (called = resolve))
    const pending = service(ctx).run({
      code: 'await wait({})',
      signal: controller.signal,
      host: {
        wait: (_args, signal) =>
          new Promise((resolve) => {
            hostSignal = signal
            signal.addEventListener('abort', () => resolve(null))
            called()
          }),
      },
    })
    await waiting
    controller.abort()
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' })
    expect(hostSignal?.aborted).toBe(true)
  })

  it('lets a host function run another program (the pool grows past its size instead of deadlocking)', async () => {
    const { ctx } = await setup([], { poolSize: 1 })
    const output = await service(ctx).run({
      code: 'return await inner({ n: 2 })',
      host: { inner: async (args: any) => (await service(ctx).run({ code: `return ${args.n} * 21` })).result! },
    })
    expect(output.result).toBe(42)
  })

  it('is provided while the plugin is loaded and gone after unload', async () => {
    const { ctx, fiber } = await setup([])
    expect(ctx.get('codeMode')).toBeDefined()
    await fiber.dispose()
    expect(ctx.get('codeMode')).toBeUndefined()
  })
})
