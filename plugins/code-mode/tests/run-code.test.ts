import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { CordageError, defineTool } from '@cordage/core'
import { listenerCount } from '@cordage/registry'
import { createTestContext, testToolContract } from '@cordage/testing'
import * as codeMode from '../src/index.js'
import { failureOf, lookup, setup, valueOf } from './helpers.js'

testToolContract(codeMode, {
  cases: [
    { name: 'a program returning a value', tool: 'run_code', arguments: { code: 'console.log("hi"); return { n: 1 }' } },
    { name: 'a program that throws', tool: 'run_code', arguments: { code: 'throw new Error("boom")' }, expect: 'error' },
  ],
})

const missing = defineTool({
  name: 'missing',
  description: 'Fails with a coded error.',
  parameters: Schema.object({}),
  output: { schema: Schema.object({}), render: () => [{ type: 'text', text: '' }] },
  execute: () => {
    throw new CordageError('NOT_FOUND', 'no user 7')
  },
})

const dashed = defineTool({
  name: 'word-count',
  description: 'Counts words.',
  parameters: Schema.object({ text: Schema.string().required() }),
  output: { schema: Schema.natural(), render: (_a, v) => [{ type: 'text', text: String(v) }] },
  execute: (args) => args.text.split(/\s+/).filter(Boolean).length,
})

const failing = defineTool({
  name: 'failing',
  description: 'Always fails.',
  parameters: Schema.object({}),
  output: { schema: Schema.object({}), render: () => [{ type: 'text', text: '' }] },
  execute: () => {
    throw new Error('disk on fire')
  },
})

describe('run_code', () => {
  it('gives the program the exact canonical value, deep-frozen inside the sandbox', async () => {
    const { run } = await setup([lookup])
    const value = valueOf(
      await run(`
      const user = await tools.lookup({ id: 7 })
      const attempts = []
      for (const mutate of [() => { user.name = 'x' }, () => { user.profile.active = false }, () => { user.tags.push('c') }, () => { delete user.id }]) {
        try { mutate(); attempts.push('mutated') } catch (error) { attempts.push(error.constructor.name) }
      }
      return { user, attempts, frozen: [Object.isFrozen(user), Object.isFrozen(user.profile), Object.isFrozen(user.tags)] }
    `),
    ).result
    expect(value.user).toEqual({ id: 7, name: 'user-7', tags: ['a', 'b'], profile: { active: true, score: 0.5 } })
    expect(value.attempts).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError'])
    expect(value.frozen).toEqual([true, true, true])
  })

  it('returns logs and an absent result for a program that returns undefined, and renders logs then the result', async () => {
    const { ctx, run } = await setup([lookup])
    const quiet = await run('console.log("one", 2, { three: 3 }, [4], undefined, null)')
    expect(valueOf(quiet)).toEqual({ logs: ['one 2 {"three":3} [4] undefined null'] })
    expect('result' in valueOf(quiet)).toBe(false)
    const text = await run('console.log("line"); return "plain text"')
    expect(text.content).toEqual([{ type: 'text', text: 'line\nplain text' }])
    const json = await run('return { a: [1, 2] }')
    expect(json.content).toMatchInlineSnapshot(`
      [
        {
          "text": "{
        "a": [
          1,
          2
        ]
      }",
          "type": "text",
        },
      ]
    `)
    expect((await run('return 1')).isError).toBe(false)
    expect('meta' in (await run('return 1'))).toBe(false)
    expect(ctx.tools.get('run_code')!.output.presentationMeta).toBeUndefined()
  })

  it('carries log lines through the shared log buffer intact: newlines, empty lines, multibyte text', async () => {
    const { run } = await setup([])
    expect(valueOf(await run('console.log("a\\nb"); console.log(""); console.warn("é🙂", 1); return "x"'))).toEqual({
      logs: ['a\nb', '', 'é🙂 1'],
      result: 'x',
    })
  })

  it('snapshots arguments when the call is made: later mutation does not reach the tool', async () => {
    const { run, results } = await setup([lookup])
    const value = valueOf(await run('const args = { id: 1 }; const pending = tools.lookup(args); args.id = 2; return (await pending).id')).result
    expect(value).toBe(1)
    expect(results.find((entry) => entry.exec.name === 'lookup')!.exec.arguments).toEqual({ id: 1 })
  })

  it('binds exotic tool names through tools["a-b"] and resolves scalar values', async () => {
    const { run } = await setup([dashed])
    expect(valueOf(await run('return await tools["word-count"]({ text: "a b  c" })')).result).toBe(3)
  })

  // QuickJS attaches `stack` to any Error when it is thrown; the data a ToolCallError carries is toolName and message.
  it('rejects failed calls with a ToolCallError carrying toolName, message, code and info', async () => {
    const { ctx, run } = await setup([failing, lookup, missing])
    ctx.on('tools/pre-execute', (exec, next) => ((exec.arguments as any)?.id === 13 ? { kind: 'deny', reason: 'unlucky' } : next()))
    const value = valueOf(
      await run(`
      const seen = []
      const attempts = [() => tools.failing({}), () => tools.lookup({ id: -1 }), () => tools.lookup({ id: 1n }), () => tools.lookup({ id: 1, when: new Date() }), () => tools.lookup({ id: 13 }), () => tools.missing({})]
      for (const attempt of attempts) {
        try { await attempt(); seen.push('resolved') } catch (error) {
          seen.push({ isToolCallError: error instanceof ToolCallError, isError: error instanceof Error, name: error.name, own: Object.getOwnPropertyNames(error).filter((key) => key !== 'stack').sort(), toolName: error.toolName, message: error.message, code: error.code, info: error.info ?? null, frozen: error.info ? Object.isFrozen(error.info) : null })
        }
      }
      return seen
    `),
    ).result
    const own = ['code', 'info', 'message', 'toolName']
    expect(value.map((entry: any) => [entry.isToolCallError, entry.isError, entry.name, entry.own, entry.toolName, entry.code, entry.info])).toEqual([
      [true, true, 'ToolCallError', own, 'failing', 'TOOL_FAILED', null],
      [true, true, 'ToolCallError', own, 'lookup', 'INVALID_ARGS', { name: 'ToolArgsError', code: 'INVALID_ARGS' }],
      [true, true, 'ToolCallError', own, 'lookup', 'INVALID_ARGS', null],
      [true, true, 'ToolCallError', own, 'lookup', 'INVALID_ARGS', null],
      [true, true, 'ToolCallError', own, 'lookup', 'DENIED', { name: 'ToolDeniedError', code: 'DENIED' }],
      [true, true, 'ToolCallError', own, 'missing', 'NOT_FOUND', { name: 'CordageError', code: 'NOT_FOUND' }],
    ])
    expect(value.filter((entry: any) => entry.info).every((entry: any) => entry.frozen)).toBe(true)
    expect(value[0].message).toBe('disk on fire')
    expect(value[1].message).toMatch(/invalid arguments for lookup/)
    expect(value[2].message).toBe('the arguments are not JSON: $.id: a bigint is not JSON')
    expect(value[3].message).toBe('the arguments are not JSON: $.when: a class instance is not JSON (only plain objects and arrays are)')
    expect(value[4].message).toMatch(/unlucky/)
    expect(value[5].message).toBe('no user 7')
  })

  it("describeTool returns a visible tool's full declaration with docs, and UNKNOWN_TOOL for run_code or a name that is not bound", async () => {
    const { run } = await setup([lookup], { exclude: [] })
    const value = valueOf(
      await run(`
      const doc = await describeTool('lookup')
      const refused = []
      for (const name of ['run_code', 'nope', 42]) {
        try { await describeTool(name) } catch (error) { refused.push([error instanceof ToolCallError, error.code, error.message]) }
      }
      return { doc, refused }
    `),
    ).result
    expect(value.doc).toMatchInlineSnapshot(`
      "/**
       * Looks up a user by id.
       */
      tools.lookup(args: {
        /** User id */
        id: number
      }): Promise<{
        readonly id: number
        readonly name: string
        readonly tags: ReadonlyArray<string>
        readonly profile: {
          readonly active: boolean
          readonly score?: number
        }
      }>
      "
    `)
    expect(value.refused.map((entry: any) => entry.slice(0, 2))).toEqual([
      [true, 'UNKNOWN_TOOL'],
      [true, 'UNKNOWN_TOOL'],
      [true, 'UNKNOWN_TOOL'],
    ])
    expect(value.refused[0][2]).toBe('tool "run_code" is not available to programs; available: lookup')
  })

  it('dispatches nested calls with the run_code token as parent, and does not bind run_code itself', async () => {
    const { run, results } = await setup([lookup])
    const value = valueOf(
      await run(`
      await tools.lookup({ id: 1 })
      return { bound: Object.keys(tools), runCode: typeof tools.run_code }
    `),
    ).result
    expect(value).toEqual({ bound: ['lookup'], runCode: 'undefined' })
    const outer = results.find((entry) => entry.exec.name === 'run_code')!
    const nested = results.filter((entry) => entry.exec.parent !== undefined)
    expect(nested.map((entry) => entry.exec.name)).toEqual(['lookup'])
    expect(nested[0].exec.parent).toBe(outer.exec.token)
    expect(outer.exec.parent).toBeUndefined()
  })

  it('reports an uncaught program error with its logs and CODE_RUN_FAILED', async () => {
    const { run } = await setup([])
    const failure = failureOf(await run('console.log("before"); null.x'))
    expect(failure.code).toBe('CODE_RUN_FAILED')
    expect(failure.message).toMatch(/^run_code failed \(runtime\): TypeError: cannot read property 'x' of null/)
    expect(failure.message).toMatch(/Logs before the failure:\nbefore$/)
  })

  it('unloads cleanly: run_code and its tools/changed listener are gone', async () => {
    const ctx = await createTestContext()
    const hooks = () => listenerCount(ctx, 'tools/changed')
    const before = hooks()
    const fiber = await ctx.plugin(codeMode, {})
    expect(ctx.tools.get('run_code')).toBeDefined()
    expect(hooks()).toBe(before + 1)
    await fiber.dispose()
    expect(ctx.tools.get('run_code')).toBeUndefined()
    expect(hooks()).toBe(before)
  })

  it('rejects an invalid config at load', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(codeMode, { cpuTimeMs: -1 })).rejects.toThrow()
    expect(ctx.tools.get('run_code')).toBeUndefined()
  })
})
