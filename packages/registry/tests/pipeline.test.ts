import { describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import type { ToolDefinition, ToolExecutionResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { echo, rawTool } from './helpers.js'

function code(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined
}

const shout: ToolDefinition = {
  ...rawTool('shout', (args: any) => ({ message: String(args.message).toUpperCase(), length: String(args.message).length })),
  output: {
    schema: {
      type: 'object',
      properties: { message: { type: 'string' }, length: { type: 'integer' } },
      required: ['message', 'length'],
      additionalProperties: false,
    },
    render: (_args: any, value: any) => [{ type: 'text' as const, text: `SHOUT ${value.message}` }],
  },
}

describe('tools/pre-execute and guards', () => {
  it('denies with the listener reason', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    let ran = false
    ctx.on('tools/post-execute', async (_exec, _result, next) => {
      ran = true
      return next()
    })
    ctx.on('tools/pre-execute', async (exec, next) => (exec.name === 'echo' ? { kind: 'deny', reason: 'echo is off' } : next()))
    const result = await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })
    expect(code(result)).toBe('DENIED')
    expect(result.content).toEqual([{ type: 'text', text: 'Error: echo is off' }])
    expect(ran, 'post-execute does not run for calls that never executed').toBe(false)
  })

  it('sends ask to the approval service, and denies without one', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'writes output' }))
    const withoutApproval = await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })
    expect(code(withoutApproval)).toBe('DENIED')
    expect(withoutApproval.isError && withoutApproval.error.message).toContain('no approval service')
    const answers: Array<'allow' | 'deny'> = ['allow', 'deny']
    const asked: string[] = []
    ctx.provide('approval', {
      request: async (exec: any, reason?: string) => {
        asked.push(`${exec.name}:${reason}`)
        return answers.shift()!
      },
    })
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })).isError).toBe(false)
    expect(code(await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } }))).toBe('DENIED')
    expect(asked).toEqual(['echo:writes output', 'echo:writes output'])
  })

  it('treats a throwing pre-execute listener or guard as a denial (fail closed)', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    const dispose = ctx.on('tools/pre-execute', () => {
      throw new Error('rule crashed')
    })
    expect(code(await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } }))).toBe('DENIED')
    dispose()
    ctx.tools.guard(() => {
      throw new Error('guard crashed')
    })
    const result = await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })
    expect(result.isError && result.error.message).toContain('guard crashed')
  })

  it('never runs a body whose tool was unregistered while policy was deciding', async () => {
    const ctx = await createTestContext()
    let ran = false
    const dispose = ctx.tools.register(
      rawTool('fleeting', () => {
        ran = true
        return 1
      }),
    )
    ctx.on('tools/pre-execute', async (_exec, next) => {
      dispose()
      return next()
    })
    const result = await ctx.tools.execute({ name: 'fleeting', arguments: {} })
    expect(code(result)).toBe('UNKNOWN_TOOL')
    expect(result.isError && result.error.message).toBe('tool "fleeting" was unregistered before the call could run; available: (none)')
    expect(ran).toBe(false)
  })

  it('makes guards monotonic: a later allow cannot re-allow', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    ctx.tools.guard((exec) => ((exec.arguments as any).message === 'rm' ? 'no rm' : undefined))
    ctx.on('tools/pre-execute', async () => ({ kind: 'allow' }), true)
    const denied = await ctx.tools.execute({ name: 'echo', arguments: { message: 'rm' } })
    expect(denied.isError && denied.error.message).toBe('no rm')
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'ls' } })).isError).toBe(false)
  })

  it('removes a plugin guard when the plugin unloads', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    const fiber = await ctx.plugin({ name: 'guardian', inject: ['tools'], apply: (ctx: Context) => void ctx.tools.guard(() => 'locked') })
    expect(code(await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } }))).toBe('DENIED')
    await fiber.dispose()
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })).isError).toBe(false)
  })
})

describe('tools/execute wrappers', () => {
  it.each([
    ['a cached result from another call', 'cached'],
    ['the result of another tool', 'other-tool'],
    ['a spread copy of its own result', 'spread'],
    ['an authored success object', 'authored'],
  ])('re-renders %s from its value under the active tool', async (_label, mode) => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    ctx.tools.register(shout)
    const cached = await ctx.tools.execute({ name: 'echo', arguments: { message: 'earlier' } })
    ctx.on('tools/execute', async (exec, next) => {
      if (exec.name !== 'shout') return next()
      if (mode === 'cached') return cached
      if (mode === 'other-tool') return ctx.tools.execute({ name: 'echo', arguments: { message: 'other' } })
      if (mode === 'spread') return { ...(await next()) }
      return {
        isError: false,
        value: { message: 'AUTHORED', length: 8 },
        content: [{ type: 'text', text: 'forged content' }],
        additionalContexts: [{ source: 'wrapper', text: 'kept' }],
      }
    })
    const result = await ctx.tools.execute({ name: 'shout', arguments: { message: 'now' } })
    expect(result.isError).toBe(false)
    const expected = { cached: 'SHOUT earlier', 'other-tool': 'SHOUT other', spread: 'SHOUT NOW', authored: 'SHOUT AUTHORED' }[mode]
    expect(result.content).toEqual([{ type: 'text', text: expected }])
    if (mode === 'authored') expect(result.additionalContexts).toEqual([{ source: 'wrapper', text: 'kept' }])
  })

  it('fails a foreign success whose value breaks the active output schema', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(shout)
    ctx.on('tools/execute', async () => ({ isError: false, value: { wrong: true }, content: [] }) as any)
    const result = await ctx.tools.execute({ name: 'shout', arguments: { message: 'x' } })
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
  })

  it('contains a throwing wrapper and a wrapper returning garbage', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(shout)
    const dispose = ctx.on('tools/execute', async () => {
      throw new Error('wrapper crashed')
    })
    const crashed = await ctx.tools.execute({ name: 'shout', arguments: { message: 'x' } })
    expect(crashed.isError && crashed.error.message).toBe('wrapper crashed')
    dispose()
    ctx.on('tools/execute', async () => 'nonsense' as any)
    expect(code(await ctx.tools.execute({ name: 'shout', arguments: { message: 'x' } }))).toBe('INVALID_TOOL_OUTPUT')
  })
})

describe('tools/post-execute decisions', () => {
  async function withDecision(decide: (result: ToolExecutionResult) => any, name = 'echo', args: object = { message: 'hi', secret: 's3' }) {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    ctx.tools.register(
      rawTool('fails', () => {
        throw new Error('body failed')
      }),
    )
    ctx.on('tools/post-execute', async (_exec, result, next) => {
      await next()
      return decide(result)
    })
    return ctx.tools.execute({ name, arguments: args })
  }

  it('content replacement changes presentation only: value and meta are kept', async () => {
    const result = await withDecision(() => ({ kind: 'accept', content: [{ type: 'text', text: 'redacted view' }] }))
    expect(result).toEqual({
      isError: false,
      value: { message: 'hi', length: 2, secret: 's3' },
      content: [{ type: 'text', text: 'redacted view' }],
      meta: { arg: 'hi', length: 2 },
    })
  })

  it('value replacement is revalidated, re-rendered and its meta recomputed', async () => {
    const result = await withDecision((r: any) => ({ kind: 'accept', value: { message: r.value.message, length: 99 } }))
    expect(result).toEqual({
      isError: false,
      value: { message: 'hi', length: 99 },
      content: [{ type: 'text', text: 'echo: hi' }],
      meta: { arg: 'hi', length: 99 },
    })
  })

  it('a value replacement that breaks the schema fails instead of leaking the original', async () => {
    const result = await withDecision(() => ({ kind: 'accept', value: { message: 'hi' } }))
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
    expect(JSON.stringify(result)).not.toContain('s3')
  })

  it('replacing both content and value fails', async () => {
    const result = await withDecision(() => ({ kind: 'accept', value: { message: 'x', length: 1 }, content: [] }))
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
  })

  it('replacing the value of a failure fails', async () => {
    const result = await withDecision(() => ({ kind: 'accept', value: 1 }), 'fails', {})
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
  })

  it('block turns the result into a DENIED failure with the feedback as content and no value', async () => {
    const result = await withDecision(() => ({ kind: 'block', feedback: 'output contained a key' }))
    expect(result).toEqual({
      isError: true,
      error: { message: 'output contained a key', info: { name: 'ToolDeniedError', code: 'DENIED' } },
      content: [{ type: 'text', text: 'output contained a key' }],
    })
  })

  it('a throwing post-execute listener withholds the result (fail closed)', async () => {
    const result = await withDecision(() => {
      throw new Error('policy crashed')
    })
    expect(code(result)).toBe('DENIED')
    expect(JSON.stringify(result)).not.toContain('s3')
  })

  it('treats a listener that calls next() twice as a failed policy', async () => {
    const result = await (async () => {
      const ctx = await createTestContext()
      ctx.tools.register(echo)
      ctx.on('tools/post-execute', async (_exec, _result, next) => {
        await next()
        return next()
      })
      return ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })
    })()
    expect(code(result)).toBe('DENIED')
    expect(result.isError && result.error.message).toContain('next() called multiple times')
  })

  it('keeps additionalContexts from the body and every decision in order', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(
      rawTool('ctx', (_args, exec) => {
        exec.deferContext({ source: 'body', text: '1' })
        return null
      }),
    )
    ctx.on('tools/post-execute', async (_exec, _result, next) => {
      const inner = await next()
      return { ...inner, additionalContexts: [...(inner.additionalContexts ?? []), { source: 'outer', text: '3' }] }
    })
    ctx.on('tools/post-execute', async () => ({ kind: 'accept', additionalContexts: [{ source: 'inner', text: '2' }] }))
    const result = await ctx.tools.execute({ name: 'ctx', arguments: {} })
    expect(result.additionalContexts?.map((c) => c.text)).toEqual(['1', '2', '3'])
  })

  it('a prepended listener that calls next() first sees what later listeners decided, in both load orders', async () => {
    const generic = {
      name: 'generic',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.on(
          'tools/post-execute',
          async (_exec, result, next) => {
            const decision = await next()
            const content = decision.kind === 'accept' ? (decision.content ?? result.content) : []
            const text = content.map((b) => (b.type === 'text' ? b.text : '')).join('')
            return { ...decision, content: [{ type: 'text' as const, text: `[bounded] ${text}` }] } as any
          },
          true,
        )
      },
    }
    const owned = {
      name: 'owned',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.register(echo)
        ctx.on('tools/post-execute', async (exec, _result, next) => {
          await new Promise((resolve) => setTimeout(resolve, 5))
          if (exec.name !== 'echo') return next()
          return { kind: 'accept', content: [{ type: 'text', text: 'page 1 of 3' }] }
        })
      },
    }
    const outcomes: unknown[] = []
    for (const order of [
      [generic, owned],
      [owned, generic],
    ]) {
      const ctx = await createTestContext()
      for (const plugin of order) await ctx.plugin(plugin)
      outcomes.push(await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } }))
    }
    expect(outcomes[0]).toEqual(outcomes[1])
    expect((outcomes[0] as any).content).toEqual([{ type: 'text', text: '[bounded] page 1 of 3' }])
  })
})
