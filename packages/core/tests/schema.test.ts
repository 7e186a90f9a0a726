import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import {
  UnsupportedSchemaError,
  assertSupportedSchema,
  checkSupportedSchema,
  compileValidator,
  nestSchema,
  toJsonSchema,
  type JsonSchemaNode,
} from '../src/index.js'

describe('toJsonSchema', () => {
  it('converts the JSON-expressible subset', () => {
    const schema = Schema.object({
      name: Schema.string()
        .required()
        .description('who')
        .pattern(/^[a-z]+$/)
        .min(1)
        .max(10),
      count: Schema.natural().default(3),
      ratio: Schema.number().min(0).max(1),
      step: Schema.number().step(0.5),
      flag: Schema.boolean(),
      mode: Schema.union(['fast', 'slow']),
      either: Schema.union([Schema.string(), Schema.number()]),
      fixed: Schema.const('x'),
      list: Schema.array(Schema.string()).min(1),
      pair: Schema.tuple([Schema.string().required(), Schema.number()]),
      map: Schema.dict(Schema.number()),
      both: Schema.intersect([Schema.object({ a: Schema.string().required() }), Schema.object({ b: Schema.number() })]),
      anything: Schema.any(),
      old: Schema.string().deprecated(),
    })
    expect(toJsonSchema(schema)).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', description: 'who', pattern: '^[a-z]+$', minLength: 1, maxLength: 10 },
        count: { type: 'integer', minimum: 0, default: 3 },
        ratio: { type: 'number', minimum: 0, maximum: 1 },
        step: { type: 'number', multipleOf: 0.5 },
        flag: { type: 'boolean' },
        mode: { enum: ['fast', 'slow'] },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        fixed: { const: 'x' },
        list: { type: 'array', items: { type: 'string' }, minItems: 1 },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false, minItems: 1 },
        map: { type: 'object', additionalProperties: { type: 'number' } },
        both: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'], additionalProperties: false },
        anything: {},
        old: { type: 'string', deprecated: true },
      },
    })
  })

  it('reports every construct without a JSON Schema form', () => {
    const schema = Schema.object({
      when: Schema.date(),
      fn: Schema.function(),
      cls: Schema.is(Date),
      shout: Schema.transform(Schema.string(), (s) => s.toUpperCase()),
    })
    try {
      toJsonSchema(schema)
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(UnsupportedSchemaError)
      const paths = (error as UnsupportedSchemaError).violations.map((v) => v.path)
      for (const field of ['when', 'fn', 'cls', 'shout']) {
        expect(
          paths.some((path) => path.startsWith(`/properties/${field}`)),
          field,
        ).toBe(true)
      }
    }
  })

  it('rejects things that are not schemastery schemas', () => {
    expect(() => toJsonSchema({ type: 'object' } as any)).toThrow(UnsupportedSchemaError)
  })
})

describe('assertSupportedSchema', () => {
  it('accepts the documented subset, including local $ref and $defs', () => {
    expect(() =>
      assertSupportedSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: ['object', 'null'],
        properties: { a: { $ref: '#/$defs/a' }, b: { type: 'array', prefixItems: [{ const: 1 }], items: { type: 'string', format: 'uri' } } },
        patternProperties: { '^x-': true },
        additionalProperties: { not: { type: 'null' } },
        $defs: { a: { oneOf: [{ type: 'integer', minimum: 0 }, { allOf: [{ type: 'string' }, { maxLength: 3 }] }] } },
        title: 't',
        description: 'd',
        examples: [{}],
        deprecated: false,
        default: null,
      }),
    ).not.toThrow()
  })

  it('reports every violation with its path and rejects unknown keywords', () => {
    const violations = checkSupportedSchema({
      type: 'object',
      properties: {
        a: { type: 'strng' },
        b: { if: { type: 'string' }, then: {} },
        c: { $ref: 'http://example.com/schema' },
        d: { pattern: '(' },
        e: { format: 'made-up' },
        f: { items: [{ type: 'string' }] },
        g: { $ref: '#/$defs/missing' },
      },
      nullable: true,
    })
    expect(violations.map((v) => v.path)).toEqual([
      '/nullable',
      '/properties/a/type',
      '/properties/b/if',
      '/properties/b/then',
      '/properties/c/$ref',
      '/properties/d/pattern',
      '/properties/e/format',
      '/properties/f/items',
      '/properties/g/$ref',
    ])
    expect(() => assertSupportedSchema({ nullable: true })).toThrow(/unsupported keyword "nullable"/)
  })
})

describe('compileValidator', () => {
  it('returns the same cached function for the same schema object', () => {
    const schema = { type: 'string' } as const
    expect(compileValidator(schema)).toBe(compileValidator(schema))
  })

  it('reports violations as JSON pointers', () => {
    const validate = compileValidator({
      type: 'object',
      properties: { a: { type: 'string' }, 'b/c': {}, list: { type: 'array', items: { type: 'integer' } } },
      required: ['a', 'b/c'],
      additionalProperties: false,
    })
    expect(validate({ a: 'x', 'b/c': 1 })).toEqual([])
    expect(validate({ a: 1, list: [1, 'x'], extra: true })).toEqual(
      expect.arrayContaining([
        { path: '/a', message: 'must be string' },
        { path: '/list/1', message: 'must be integer' },
        { path: '/b~1c', message: 'is required' },
        { path: '/extra', message: 'is not an allowed property' },
      ]),
    )
  })

  it('accepts scalar, array and null roots and boolean schemas', () => {
    expect(compileValidator({ type: 'null' })(null)).toEqual([])
    expect(compileValidator({ type: 'array', items: { type: 'number' } })([1, 2])).toEqual([])
    expect(compileValidator({ type: 'integer' })(1.5)).toHaveLength(1)
    expect(compileValidator(true)(undefined)).toEqual([])
    expect(compileValidator(false)(1)).toHaveLength(1)
  })

  it('throws UnsupportedSchemaError for schemas outside the subset', () => {
    expect(() => compileValidator({ type: 'object', dependentSchemas: {} } as any)).toThrow(UnsupportedSchemaError)
  })
})

describe('nestSchema', () => {
  it('rebases local refs onto the new position, leaves data keywords alone and drops root-only keywords', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'array',
      items: { $ref: '#/$defs/item' },
      $defs: { item: { type: 'string' } },
      default: [{ $ref: '#/not-a-ref' }],
    } as any
    const nested = nestSchema(schema, '/properties/result')
    expect(nested).toEqual({
      type: 'array',
      items: { $ref: '#/properties/result/$defs/item' },
      $defs: { item: { type: 'string' } },
      default: [{ $ref: '#/not-a-ref' }],
    })
    expect(schema.items.$ref).toBe('#/$defs/item')
    const wrapper: JsonSchemaNode = { type: 'object', properties: { result: nested }, required: ['result'] }
    expect(compileValidator(wrapper)({ result: ['a'] })).toEqual([])
    expect(compileValidator(wrapper)({ result: [1] })).toHaveLength(1)
  })
})
