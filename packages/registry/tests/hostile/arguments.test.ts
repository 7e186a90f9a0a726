import { describe, expect, it } from 'vitest'
import type { JsonValue } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { echo, rawTool } from '../helpers.js'

// Reproductions: raw (and bridged) tools' arguments reached policy and the body unvalidated.

describe('the registry validates arguments for every tool before tools/pre-execute', () => {
  it('a raw tool with invalid arguments fails INVALID_ARGS listing every violation; no listener or body runs', async () => {
    const ctx = await createTestContext({ print: false })
    const seen: JsonValue[] = []
    let ran = 0
    ctx.tools.register(
      rawTool(
        'read_file',
        () => {
          ran++
          return 'x'
        },
        {
          parameters: { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer' } }, required: ['path'], additionalProperties: false },
        },
      ),
    )
    ctx.on('tools/pre-execute', (exec, next) => {
      seen.push(exec.arguments)
      return next()
    })
    const result = await ctx.tools.execute({ name: 'read_file', arguments: { path: ['secret.txt'], limit: 'all', extra: 1 } })
    expect(result.isError && result.error.info?.code).toBe('INVALID_ARGS')
    expect(result.isError && result.error.message).toBe(
      'invalid arguments for read_file:\n  /extra: is not an allowed property\n  /path: must be string\n  /limit: must be integer',
    )
    expect(seen).toEqual([])
    expect(ran).toBe(0)
    const valid = await ctx.tools.execute({ name: 'read_file', arguments: { path: 'a.txt' } })
    expect(valid.isError).toBe(false)
    expect(seen).toEqual([{ path: 'a.txt' }])
  })

  it('defineTool tools fail the same way, before guards and listeners', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(echo)
    let guarded = 0
    ctx.tools.guard(() => {
      guarded++
      return undefined
    })
    const result = await ctx.tools.execute({ name: 'echo', arguments: { message: 7 } })
    expect(result.isError && result.error.message).toBe('invalid arguments for echo:\n  /message: must be string')
    expect(guarded).toBe(0)
  })
})
