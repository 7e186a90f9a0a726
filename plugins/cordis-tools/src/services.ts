import { HOST_SERVICES } from '@cordage/services'
import type { Context } from 'cordis'
import { isJsonObject, toJsonValue, type JsonObject, type JsonValue } from '@cordage/core'
import { FacadeError } from './errors.js'

/** Names of a Cordis context (its properties, then its mixins' methods) that host plugins read: a service of the same name would shadow them. */
const CONTEXT_NAMES = new Set(
  'config name root fiber scope runtime registry reflect events lifecycle timer logger loader get set provide accessor mixin effect inject plugin on once parallel emit serial bail waterfall'.split(
    ' ',
  ),
)

/** A service a mount provides: its data, and methods that call into that mount's sandbox. */
export interface ProvidedService {
  mount: string
  methods: string[]
  data: JsonObject
  call(method: string, args: JsonValue[]): Promise<JsonValue>
}

/** Every service the mounts of one cordis-tools instance provide, by name. */
export type ServiceTable = Map<string, ProvidedService>

const SERVICE_NAME = /^[a-z][\w-]*$/i

/**
 * Provides a mount's service on its context: to host plugins and other mounts it is a frozen object of
 * the data the mount gave and async methods (JSON arguments in, a JSON value out) answered by the
 * mount's sandbox. Throws when the name is taken. Returns the name.
 */
export function provideService(
  real: Context,
  table: ServiceTable,
  mount: string,
  request: JsonObject,
  call: (method: string, args: JsonValue[]) => Promise<JsonValue>,
): string {
  const { name } = request
  if (typeof name !== 'string' || !SERVICE_NAME.test(name)) throw new FacadeError('ctx.provide(name, value) needs a service name')
  // The host's services, and the names of the context itself (`config`, `name`, its mixins), are not a mount's to provide.
  if (HOST_SERVICES.has(name) || CONTEXT_NAMES.has(name))
    throw new FacadeError(`ctx.provide: "${name}" is a name the host uses; provide services under names of your own`)
  const methods = Array.isArray(request.methods) ? request.methods.filter((method): method is string => typeof method === 'string') : []
  const data = isJsonObject(request.data) ? request.data : {}
  const value: Record<string, unknown> = { ...data }
  for (const method of methods) value[method] = (...args: unknown[]) => call(method, toJsonValue(args) as JsonValue[])
  // In the table first: providing it starts the mounts that wait for it, and they look it up here.
  const previous = table.get(name)
  table.set(name, { mount, methods, data, call })
  try {
    real.provide(name, Object.freeze(value))
  } catch (error) {
    if (previous) table.set(name, previous)
    else table.delete(name)
    throw error
  }
  real.effect(
    () => () => {
      if (table.get(name)?.mount === mount) table.delete(name)
    },
    `cordis mount ${mount}: service ${name}`,
  )
  return name
}

/** Calls a method of a mount-provided service for another mount. */
export function callService(table: ServiceTable, name: string, method: string, args: JsonValue[]): Promise<JsonValue> {
  const entry = table.get(name)
  if (!entry) return Promise.reject(new FacadeError(`service ${name} is gone (the mount that provided it was removed)`))
  if (!entry.methods.includes(method))
    return Promise.reject(new FacadeError(`service ${name} has no method ${method}; it has ${entry.methods.join(', ') || 'none'}`))
  return entry.call(method, args)
}
