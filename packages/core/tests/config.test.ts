import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { ConfigError, strictConfig, unknownConfigKeys } from '../src/config.js'
import type { JsonSchemaNode } from '../src/schema.js'
import { distance } from '../src/config-keys.js'
import { CordageError } from '../src/errors.js'

const Rule = Schema.object({
  tool: Schema.string().required(),
  when: Schema.array(Schema.object({ pointer: Schema.string().required(), glob: Schema.string() })),
  action: Schema.union(['allow', 'deny']).required(),
})
const Policy = Schema.object({
  rules: Schema.array(Rule).default([]),
  env: Schema.dict(Schema.object({ value: Schema.string() })).default({}),
  extra: Schema.any(),
})

const thrown = (fn: () => unknown): ConfigError => {
  try {
    fn()
  } catch (error) {
    return error as ConfigError
  }
  throw new Error('did not throw')
}

describe('unknown config keys', () => {
  it.each([
    [{ rulez: [] }, '', 'unknown key "rulez"; did you mean "rules"? (valid keys: rules, env, extra)'],
    [{ rule: [] }, '', 'unknown key "rule"; did you mean "rules"? (valid keys: rules, env, extra)'],
    [
      {
        rules: [
          { tool: 'x', action: 'deny' },
          { tool: 'y', whne: [], action: 'deny' },
        ],
      },
      'rules[1]',
      'unknown key "whne"; did you mean "when"? (valid keys: tool, when, action)',
    ],
    [
      { rules: [{ tool: 'x', action: 'deny', when: [{ pointer: '/a', Glob: '*' }] }] },
      'rules[0].when[0]',
      'unknown key "Glob"; did you mean "glob"? (valid keys: pointer, glob)',
    ],
    [{ env: { HOME: { value: 'x', valeu: 'y' } } }, 'env.HOME', 'unknown key "valeu"; did you mean "value"? (valid keys: value)'],
  ])('%j → %s: %s', (config, path, message) => {
    expect(unknownConfigKeys(Policy, config)).toEqual([{ path, message }])
  })

  it('accepts what the schema declares: dict keys, `any` contents, missing optional fields', () => {
    expect(unknownConfigKeys(Policy, { rules: [{ tool: 'x', action: 'deny' }], env: { ANY_NAME: {} }, extra: { free: { form: 1 } } })).toEqual([])
    expect(unknownConfigKeys(Policy, undefined)).toEqual([])
  })

  it('reports every unknown key, not just the first', () => {
    expect(unknownConfigKeys(Policy, { a: 1, rules: [{ tool: 'x', action: 'deny', b: 2 }] }).map((issue) => issue.path)).toEqual(['', 'rules[0]'])
  })

  it('judges a union against its best-fitting alternative and an intersection against all its keys', () => {
    const Either = Schema.union([
      Schema.object({ kind: Schema.const('a'), alpha: Schema.string() }),
      Schema.object({ kind: Schema.const('b'), beta: Schema.string() }),
    ])
    expect(unknownConfigKeys(Either, { kind: 'b', beta: 'x' })).toEqual([])
    expect(unknownConfigKeys(Either, { kind: 'b', betta: 'x' })[0]!.message).toMatch(/unknown key "betta"; did you mean "beta"\?/)
    const Both = Schema.intersect([Schema.object({ a: Schema.string() }), Schema.object({ b: Schema.string() })])
    expect(unknownConfigKeys(Both, { a: 'x', b: 'y' })).toEqual([])
    expect(unknownConfigKeys(Both, { a: 'x', c: 'y' })[0]!.message).toMatch(/unknown key "c"/)
  })

  it('walks a JSON Schema (a zod config through z.toJSONSchema): properties close an object, records stay open', () => {
    const shape = {
      oneOf: [
        {
          type: 'object',
          properties: { transport: { const: 'stdio' }, command: { type: 'string' }, env: { type: 'object', additionalProperties: { type: 'string' } } },
        },
        { type: 'object', properties: { transport: { const: 'http' }, url: { type: 'string' } } },
      ],
    } as JsonSchemaNode
    expect(unknownConfigKeys(shape, { transport: 'stdio', command: 'x', env: { ANY: 'y' } })).toEqual([])
    expect(unknownConfigKeys(shape, { transport: 'http', ulr: 'x' })).toEqual([
      { path: '', message: 'unknown key "ulr"; did you mean "url"? (valid keys: transport, url)' },
    ])
  })

  it('counts a swap of neighbouring letters as one edit', () => {
    expect(distance('whne', 'when')).toBe(1)
    expect(distance('rulez', 'rules')).toBe(1)
    expect(distance('Glob', 'glob')).toBe(0)
  })
})

describe('strictConfig', () => {
  const Config = strictConfig('policy', Policy)

  it('fails with INVALID_CONFIG naming the plugin, the path, the key and the nearest valid key', () => {
    const error = thrown(() => Config({ rules: [{ tool: 'x', whne: [], action: 'deny' }] } as never))
    expect(error).toBeInstanceOf(ConfigError)
    expect(CordageError.is(error) && error.code).toBe('INVALID_CONFIG')
    expect(error.message).toBe('policy: rules[0]: unknown key "whne"; did you mean "when"? (valid keys: tool, when, action)')
    expect(error.issues).toEqual([{ path: 'rules[0]', message: 'unknown key "whne"; did you mean "when"? (valid keys: tool, when, action)' }])
  })

  it('turns type errors into ConfigError too, through the Standard Schema Cordis calls', () => {
    const error = thrown(() => Config['~standard'].validate({ rules: [{ tool: 3, action: 'deny' }] }))
    expect(error.code).toBe('INVALID_CONFIG')
    expect(error.message).toBe('policy: rules[0].tool: expected string but got 3')
  })

  it('still parses, defaults and describes like the schema it wraps', () => {
    expect(Config(undefined)).toEqual({ rules: [], env: {} })
    expect(Config({ rules: [{ tool: 'x', action: 'deny' }] })).toEqual({ rules: [{ tool: 'x', action: 'deny', when: [] }], env: {} })
    expect(Config.description('d').meta.description).toBe('d')
  })

  it('wraps another Standard Schema (zod-like) without losing its methods', () => {
    const inner = {
      parse: (value: unknown) => value,
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (value: unknown) =>
          (value as { port?: unknown }).port === 'x' ? { issues: [{ message: 'expected number', path: [{ key: 'port' }] }] } : { value },
      },
    }
    const Strict = strictConfig('mcp-server', inner, { type: 'object', properties: { port: { type: 'number' }, host: { type: 'string' } } } as JsonSchemaNode)
    expect(Strict.parse({ port: 1 })).toEqual({ port: 1 })
    expect(Strict['~standard'].validate({ port: 1 })).toEqual({ value: { port: 1 } })
    expect(thrown(() => Strict['~standard'].validate({ prot: 1 })).message).toBe(
      'mcp-server: unknown key "prot"; did you mean "port"? (valid keys: port, host)',
    )
    expect(thrown(() => Strict['~standard'].validate({ port: 'x' })).message).toBe('mcp-server: port: expected number')
  })
})
