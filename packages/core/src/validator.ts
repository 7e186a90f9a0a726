import { errorMessage } from './failure.js'
import Ajv2020 from 'ajv/dist/2020.js'
import type { ErrorObject, ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { UnsupportedSchemaError, type Violation } from './errors.js'
import { assertSupportedSchema, type JsonSchema } from './schema.js'

/** A compiled schema check: the empty list means valid. Never throws. */
export type Validator = (value: unknown) => readonly Violation[]

const NONE: readonly Violation[] = Object.freeze([])

function createAjv(useDefaults: boolean, allErrors: boolean) {
  const ajv = new Ajv2020({ allErrors, strict: false, useDefaults, addUsedSchema: false, unicodeRegExp: true })
  addFormats(ajv)
  return ajv
}

type Ajv = ReturnType<typeof createAjv>
// Per option set: one instance that stops at the first error (the check every call runs) and one that
// collects every error (compiled for a schema only once a value fails it, to name all the violations).
// With `allErrors`, ajv also evaluates every branch of an `anyOf` a value already matched, and allocates
// an error object per failed keyword there: several times the work of the check itself.
const instances: Record<'plain' | 'defaults', { first?: Ajv; all?: Ajv }> = { plain: {}, defaults: {} }

function instance(useDefaults: boolean, allErrors: boolean): Ajv {
  const set = instances[useDefaults ? 'defaults' : 'plain']
  return allErrors ? (set.all ??= createAjv(useDefaults, true)) : (set.first ??= createAjv(useDefaults, false))
}

function compile(ajv: Ajv, schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema)
  } catch (error) {
    throw new UnsupportedSchemaError('schema does not compile', [{ path: '', message: errorMessage(error) }])
  }
}
const plainCache = new WeakMap<object, Validator>()
const defaultsCache = new WeakMap<object, Validator>()
const booleanValidators = {
  true: (() => NONE) as Validator,
  false: ((_value: unknown) => [{ path: '', message: 'no value is allowed here (schema is false)' }]) as Validator,
}

function toViolation(error: ErrorObject): Violation {
  const path = error.instancePath
  switch (error.keyword) {
    case 'required':
      return { path: `${path}/${escape(error.params.missingProperty)}`, message: 'is required' }
    case 'additionalProperties':
      return { path: `${path}/${escape(error.params.additionalProperty)}`, message: 'is not an allowed property' }
    case 'enum':
      return { path, message: `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` }
    case 'const':
      return { path, message: `must be ${JSON.stringify(error.params.allowedValue)}` }
    default:
      return { path, message: error.message ?? `fails "${error.keyword}"` }
  }
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

function build(schema: JsonSchema, useDefaults: boolean): Validator {
  if (typeof schema === 'boolean') return booleanValidators[`${schema}`]
  assertSupportedSchema(schema)
  // `$schema` and `$id` are annotations here: dialects are checked above, and ids would collide across tools.
  const { $schema: _dialect, $id: _id, ...compiled } = schema as Record<string, unknown>
  const check = compile(instance(useDefaults, false), compiled)
  let explain: ValidateFunction | undefined
  return (value) => {
    if (check(value)) return NONE
    // Validity does not depend on `allErrors`; only the list of errors does.
    explain ??= compile(instance(useDefaults, true), compiled)
    explain(value)
    return explain.errors ? explain.errors.map(toViolation) : check.errors!.map(toViolation)
  }
}

/**
 * Returns the cached ajv validator for `schema` (the same function for the same schema object).
 * Throws `UnsupportedSchemaError` when the schema is outside the supported subset.
 */
export function compileValidator(schema: JsonSchema): Validator {
  if (typeof schema === 'boolean') return booleanValidators[`${schema}`]
  let validator = plainCache.get(schema)
  if (!validator) plainCache.set(schema, (validator = build(schema, false)))
  return validator
}

/** Like `compileValidator`, but the validator fills declared `default`s into the (mutable) value it checks. */
export function compileDefaultingValidator(schema: JsonSchema): Validator {
  if (typeof schema === 'boolean') return booleanValidators[`${schema}`]
  let validator = defaultsCache.get(schema)
  if (!validator) defaultsCache.set(schema, (validator = build(schema, true)))
  return validator
}
