import type { Context } from 'cordis'
import { errorMessage, isJsonObject, toJsonValue, type JsonObject, type JsonValue, type ToolDefinition } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { CodeSession } from '@cordage/services'
import { FacadeError } from './errors.js'
import { emitRefusal, listenMode } from './events.js'
import { MountListeners } from './listeners.js'
import { mountedTool, readToolSpec, type GuestToolRunner } from './mounted-tool.js'
import { callService, provideService, type ServiceTable } from './services.js'

/** Where a mount's warnings and console lines go (the host log, tagged with the mount id). */
export interface MountLogger {
  info(text: string): void
  warn(text: string): void
}

/** What one mount's bridge works with. */
export interface BridgeOptions {
  id: string
  /** Bound of each call into the sandbox that is not a tool body (apply, a listener, a timer, a disposer, a service method). */
  timeoutMs: number
  /** `timeoutMs` of mounted tools that declare none. */
  toolTimeoutMs: number
  /** The child run that owns the mount: its listeners see only that run's calls, its nested calls run as that run. */
  owner: string | undefined
  /** The registry (the plugin's `ctx.tools`): nested calls and tool lists. */
  tools: ToolRegistry
  services: ServiceTable
  logger: MountLogger
  /** Records that this mount registered `definition` (what the ownership guard checks against). */
  ownTool(definition: ToolDefinition): void
}

const MIN_INTERVAL_MS = 10
// Live registrations (tools, listeners, effects, timers, services) one mount may hold: each costs host
// memory outside the sandbox's capped heap, so a registering loop would otherwise exhaust the host's.
const MAX_REGISTRATIONS = 1000
// The requests that answer nothing, which the façade holds while apply runs and sends together.
const BATCHED = new Set(['register', 'listen', 'emit', 'provide', 'effect', 'timer', 'clear'])
const MAX_DELAY_MS = 2 ** 31 - 1

const integer = (value: JsonValue | undefined, what: string): number => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new FacadeError(`${what} must be an integer`)
  return value
}
const text = (value: JsonValue | undefined, what: string): string => {
  if (typeof value !== 'string') throw new FacadeError(`${what} must be a string`)
  return value
}

/**
 * The host side of one mount: answers the requests its sandboxed façade sends (every one checked here,
 * since nothing in the sandbox is trusted), and calls into the sandbox for tool bodies, listeners,
 * timers, disposers and service methods, each bounded. Registrations are made on the context Cordis
 * gave the mount's current activation, so unmounting (or going back to pending) undoes them.
 */
export class GuestBridge implements GuestToolRunner {
  session!: CodeSession
  /** Nested calls of the mount carry it as `parent`: they get no presentation metadata or spill, and its own listeners skip them. */
  readonly token: symbol
  readonly provides = new Set<string>()
  /** When unmounting must be over (performance.now()); disposers share what is left of it. */
  deadline = 0
  private real: Context | undefined
  private declared = new Set<string>()
  private readonly disposers = new Map<number, () => unknown>()
  private readonly warned = new Set<string>()
  private readonly listeners: MountListeners

  constructor(private readonly options: BridgeOptions) {
    this.token = Symbol(options.id)
    this.listeners = new MountListeners(this, options.owner, options.timeoutMs)
  }

  /** The host function `cordage.op` of the sandbox: one request of the façade. */
  op = async (request: JsonValue, signal: AbortSignal): Promise<JsonValue> => {
    if (!isJsonObject(request)) throw new FacadeError('a request is an object with an op')
    switch (request.op) {
      case 'batch':
        for (const held of Array.isArray(request.ops) ? request.ops : []) {
          if (!isJsonObject(held) || !BATCHED.has(held.op as string))
            throw new FacadeError('a batch holds only register, listen, emit, provide, effect, timer and clear')
          await this.op(held, signal)
        }
        return null
      case 'register':
        return this.register(request)
      case 'listen':
        return this.listen(request)
      case 'emit': {
        const event = text(request.event, 'the event name')
        const refusal = emitRefusal(event)
        if (refusal) throw new FacadeError(`ctx.emit: ${refusal}`)
        const args = Array.isArray(request.args) ? request.args : []
        ;(this.active().emit as (name: string, ...args: unknown[]) => void)(event, ...args)
        return null
      }
      case 'provide': {
        const real = this.active()
        this.reserve()
        const name = provideService(real, this.options.services, this.options.id, request, (method, args) => this.callOwnService(name, method, args))
        this.provides.add(name)
        real.effect(() => () => this.provides.delete(name), `cordis mount ${this.options.id}: provides ${name}`)
        return null
      }
      case 'effect': {
        const id = integer(request.id, 'the effect id')
        this.reserve()
        this.disposers.set(
          id,
          this.active().effect(() => () => this.disposeGuest(id), `cordis mount ${this.options.id}: effect`),
        )
        return null
      }
      case 'timer':
        return this.timer(request)
      case 'clear':
        await this.release(integer(request.id, 'the id'))
        return null
      case 'execute':
        return this.execute(request.input, signal)
      case 'list':
        return toJsonValue(this.options.tools.list())
      case 'get':
        return toJsonValue(this.options.tools.list().find((tool) => tool.name === request.name) ?? null)
      case 'next': {
        const next = this.listeners.next(integer(request.invocation, 'the listener call'))
        if (!next) throw new FacadeError('next() is only valid while the listener it was given to runs')
        return next()
      }
      case 'service': {
        const name = text(request.name, 'the service name')
        if (!this.declared.has(name)) throw new FacadeError(`service ${name} is not declared in inject`)
        return callService(this.options.services, name, text(request.method, 'the method'), Array.isArray(request.args) ? request.args : [])
      }
    }
    throw new FacadeError(`unknown request ${JSON.stringify(request.op)}`)
  }

  /**
   * Runs the plugin's `apply` for one activation: the services it injects must come from other mounts
   * (host services are reached only through tools). Throws what apply threw, or what was refused.
   */
  async activate(real: Context, inject: readonly string[], config: unknown): Promise<void> {
    const services: JsonObject = {}
    for (const name of inject) {
      if (name === 'tools') continue
      const entry = this.options.services.get(name)
      if (!entry)
        throw new FacadeError(`service ${name} is provided by the host, not by a mount; mounted code reaches the host only through tools (ctx.tools.execute)`)
      services[name] = { methods: entry.methods, data: entry.data }
    }
    this.real = real
    this.declared = new Set(inject)
    real.effect(
      () => () => {
        if (this.real !== real) return
        this.real = undefined
        // Everything registered goes with the activation.
        this.disposers.clear()
      },
      `cordis mount ${this.options.id}: activation`,
    )
    const reply = await this.invoke({ kind: 'apply', config: config === undefined ? {} : toJsonValue(config), services }, this.options.timeoutMs)
    if (typeof reply.threw === 'string') throw new FacadeError(`apply threw: ${reply.threw}`)
    // What apply registered, in order; the first refusal fails the mount (and everything is undone).
    try {
      await this.op({ op: 'batch', ops: reply.ops ?? [] }, AbortSignal.abort())
    } catch (error) {
      throw new FacadeError(`apply threw: ${errorMessage(error)}`)
    }
  }

  /** One call into the façade (`__invoke`), with its JSON reply. */
  async invoke(payload: JsonObject, timeoutMs?: number): Promise<Record<string, JsonValue | undefined>> {
    const options = timeoutMs === undefined ? { file: `${this.options.id}.js` } : { file: `${this.options.id}.js`, timeoutMs }
    const reply = await this.session.evaluate(`return __invoke(${JSON.stringify(payload)})`, options)
    return isJsonObject(reply) ? reply : { threw: 'the mount answered nothing' }
  }

  runTool(payload: { id: number; args: JsonValue; exec: JsonValue; meta: boolean }, signal: AbortSignal): Promise<Record<string, JsonValue | undefined>> {
    if (signal.aborted) return Promise.reject(new Error('the call was cancelled'))
    return new Promise((resolve, reject) => {
      // The body cannot be interrupted inside the sandbox; the call stops waiting for it.
      const onAbort = () => reject(new Error('the call was cancelled; the mounted tool body was abandoned'))
      signal.addEventListener('abort', onAbort, { once: true })
      this.invoke({ kind: 'tool', ...payload }).then(
        (reply) => {
          signal.removeEventListener('abort', onAbort)
          resolve(reply)
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort)
          reject(new Error(`the mounted code failed: ${errorMessage(error)}`))
        },
      )
    })
  }

  private active(): Context {
    if (!this.real) throw new FacadeError('the plugin is not active (it was unmounted, or waits for a service)')
    return this.real
  }

  /** Refuses a registration past `MAX_REGISTRATIONS` live ones. */
  private reserve(): void {
    if (this.disposers.size + this.provides.size >= MAX_REGISTRATIONS)
      throw new FacadeError(
        `a mount holds at most ${MAX_REGISTRATIONS} registrations (tools, listeners, effects, timers, services); dispose some before making more`,
      )
  }

  /** Undoes one registration (a `clear`, or a timeout that fired). */
  private release(id: number): unknown {
    const dispose = this.disposers.get(id)
    this.disposers.delete(id)
    return dispose?.()
  }

  private register(request: JsonObject): JsonValue {
    const real = this.active()
    this.reserve()
    const id = integer(request.id, 'the tool id')
    const spec = readToolSpec(request.tool)
    const definition = mountedTool(id, spec, this, this.options.toolTimeoutMs)
    this.disposers.set(id, real.tools.register(definition))
    this.options.ownTool(definition)
    return null
  }

  private listen(request: JsonObject): JsonValue {
    const real = this.active()
    const id = integer(request.id, 'the listener id')
    const event = text(request.event, 'the event name')
    const mode = listenMode(event)
    if (typeof mode === 'object') throw new FacadeError(`ctx.on: ${mode.refused}`)
    this.reserve()
    this.disposers.set(id, real.on(event as never, this.listeners.listener(id, event, mode) as never, request.prepend === true))
    return null
  }

  private timer(request: JsonObject): JsonValue {
    const id = integer(request.id, 'the timer id')
    this.reserve()
    const repeat = request.repeat === true
    const requested = typeof request.ms === 'number' && Number.isFinite(request.ms) ? request.ms : 0
    const ms = Math.min(MAX_DELAY_MS, Math.max(repeat ? MIN_INTERVAL_MS : 0, requested))
    const dispose = this.active().effect(() => {
      // An interval whose last call is still running skips its turn rather than piling calls up.
      let running = false
      const fire = () => {
        if (running || this.session.ended) return
        running = true
        // A timeout is spent once it fires: its registration goes, or a chain of them would pile up.
        if (!repeat) void this.release(id)
        this.invoke({ kind: 'timer', id }, this.options.timeoutMs)
          .then(
            (reply) => void (typeof reply.threw === 'string' && this.warn(`a timer callback threw: ${reply.threw}`)),
            (error: unknown) => this.warn(`a timer callback failed: ${errorMessage(error)}`),
          )
          .finally(() => (running = false))
      }
      const handle = repeat ? setInterval(fire, ms) : setTimeout(fire, ms)
      return () => (repeat ? clearInterval(handle) : clearTimeout(handle))
    }, `cordis mount ${this.options.id}: timer`)
    this.disposers.set(id, dispose)
    return null
  }

  private async execute(input: JsonValue | undefined, signal: AbortSignal): Promise<JsonValue> {
    if (!isJsonObject(input) || typeof input.name !== 'string') throw new FacadeError('ctx.tools.execute takes { name, arguments }')
    const { owner } = this.options
    const result = await this.options.tools.execute({
      name: input.name,
      arguments: input.arguments ?? {},
      ...(typeof input.callId === 'string' && { callId: input.callId }),
      parent: this.token,
      signal,
      ...(owner !== undefined && { agent: owner }),
    })
    return toJsonValue(result)
  }

  private async callOwnService(name: string, method: string, args: JsonValue[]): Promise<JsonValue> {
    const reply = await this.invoke({ kind: 'service', name, method, args }, this.options.timeoutMs)
    if (typeof reply.threw === 'string') throw new Error(reply.threw)
    return reply.value ?? null
  }

  /** Runs one effect's disposer in the sandbox, within what is left of the unmount's deadline; failures are logged. */
  private async disposeGuest(id: number): Promise<void> {
    if (this.session.ended) return
    const left = this.deadline ? this.deadline - performance.now() : this.options.timeoutMs
    try {
      const reply = await this.invoke({ kind: 'dispose', id }, Math.max(1, Math.min(this.options.timeoutMs, left)))
      if (typeof reply.threw === 'string') this.warn(`an effect's disposer threw: ${reply.threw}`)
    } catch (error) {
      this.warn(`an effect's disposer failed: ${errorMessage(error)}`)
    }
  }

  /** A tagged warning in the host log, once per text for this mount. */
  warn(message: string): void {
    if (this.warned.has(message) || this.warned.size > 100) return
    this.warned.add(message)
    this.options.logger.warn(`[cordis:${this.options.id}] ${message}`)
  }
}
