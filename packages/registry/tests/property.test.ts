import { describe, expect, it } from 'vitest'
import * as fc from 'fast-check'
import type { ToolExecutionResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { rawTool } from './helpers.js'

// One run = one call with a generated return value, generated arguments and a generated
// tools/execute wrapper result. RUNS calls per CI run (the README reports the count).
const RUNS = Number(process.env.CORDAGE_PROPERTY_RUNS ?? 100_000)

const BLOCK_KEYS: Record<string, string[]> = { text: ['text'], image: ['data', 'mimeType'], resource: ['uri'] }

/** Every problem with `result` as a frozen, well-formed `ToolExecutionResult` (empty when it is one). */
function problems(result: ToolExecutionResult): string[] {
  const found: string[] = []
  const frozen = (value: unknown, path: string): void => {
    if (typeof value !== 'object' || value === null) return
    if (!Object.isFrozen(value)) found.push(`${path} is not frozen`)
    // Shallow enough for content, error and contexts; values are checked along one spine (deep ones are long).
    for (const [key, inner] of Object.entries(value).slice(0, 50)) frozen(inner, `${path}/${key}`)
  }
  if (!result || typeof result !== 'object') return ['not an object']
  frozen(result, '')
  if (typeof result.isError !== 'boolean') found.push('isError is not a boolean')
  if (!Array.isArray(result.content)) found.push('content is not an array')
  else {
    result.content.forEach((block, index) => {
      const keys = block && BLOCK_KEYS[block.type]
      if (!keys || keys.some((key) => typeof (block as any)[key] !== 'string')) found.push(`content[${index}] is not a valid block`)
    })
  }
  if (result.isError) {
    if ('value' in result) found.push('a failure carries a value')
    if (!result.error || typeof result.error.message !== 'string') found.push('a failure has no error message')
    const info = result.error?.info
    if (info !== undefined && (typeof info.code !== 'string' || typeof info.name !== 'string')) found.push('error.info is malformed')
  } else if (!('value' in result)) found.push('a success has no value')
  if (result.additionalContexts !== undefined) {
    if (!Array.isArray(result.additionalContexts) || result.additionalContexts.some((c) => typeof c?.source !== 'string' || typeof c?.text !== 'string')) {
      found.push('additionalContexts are malformed')
    }
  }
  return found
}

// Values of every kind, JSON or not: BigInt, Map, Date, typed arrays, sparse arrays, null prototypes, -0, NaN…
const anything = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  maxDepth: 3,
})
const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), anything, fc.record({ n: fc.integer(), s: fc.string() }, { requiredKeys: [] }))
const args = fc.oneof(fc.record({ n: fc.integer(), s: fc.string() }, { requiredKeys: [] }), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), anything)
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.string() }),
  fc.record(
    { type: fc.constantFrom('image', 'resource', 'video'), data: fc.oneof(fc.string(), anything), uri: fc.string(), mimeType: fc.string() },
    { requiredKeys: ['type'] },
  ),
  anything,
)
const authored = fc.record(
  {
    isError: fc.oneof(fc.boolean(), anything),
    value,
    content: fc.oneof(fc.array(block, { maxLength: 3 }), anything),
    error: fc.oneof(
      fc.record(
        { message: fc.oneof(fc.string(), anything), info: fc.oneof(fc.record({ name: fc.string(), code: fc.string() }), anything) },
        { requiredKeys: [] },
      ),
      anything,
    ),
    additionalContexts: fc.oneof(fc.array(fc.record({ source: fc.string(), text: fc.string() }), { maxLength: 2 }), anything),
  },
  { requiredKeys: [] },
)
// What the wrapper does: pass the body's result through, or answer with an authored object (frozen or not), or throw.
const wrapper = fc.oneof(
  fc.constant({ kind: 'pass' as const }),
  fc.record({ kind: fc.constant('author' as const), result: fc.oneof(authored, anything), freeze: fc.boolean() }),
  fc.record({ kind: fc.constant('throw' as const), error: anything }),
)
const tool = fc.constantFrom('typed', 'loose', 'throws')

describe('registry property', () => {
  it(`${RUNS} generated return values, arguments and wrapper results: every result is a frozen, well-formed union and no call rejects`, async () => {
    const ctx = await createTestContext({ print: false })
    const { execute } = ctx.tools
    let current: { value: unknown; wrapper: any } = { value: null, wrapper: { kind: 'pass' } }
    ctx.tools.register(
      rawTool('typed', () => current.value, {
        parameters: { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' } }, additionalProperties: false },
        output: {
          schema: { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' } } },
          render: (_args, v) => [{ type: 'text', text: JSON.stringify(v) }],
        },
      }),
    )
    ctx.tools.register(rawTool('loose', () => current.value))
    ctx.tools.register(
      rawTool('throws', () => {
        throw current.value
      }),
    )
    ctx.on('tools/execute', async (_exec, next) => {
      const plan = current.wrapper
      if (plan.kind === 'throw') throw plan.error
      const inner = await next()
      if (plan.kind === 'pass') return inner
      const result = plan.result
      if (plan.freeze && result && typeof result === 'object') Object.freeze(result)
      return result
    })
    let calls = 0
    await fc.assert(
      fc.asyncProperty(tool, value, args, wrapper, async (name, returned, input, plan) => {
        current = { value: returned, wrapper: plan }
        calls++
        let result: ToolExecutionResult
        try {
          result = await execute({ name, arguments: input })
        } catch (error) {
          throw new Error(`execute rejected: ${String(error)}`, { cause: error })
        }
        const found = problems(result)
        if (found.length) throw new Error(found.join('; '))
      }),
      { numRuns: RUNS },
    )
    expect(calls).toBeGreaterThanOrEqual(RUNS)
  }, 180_000)
})
