// @ts-nocheck -- QuickJS code: it runs in a mount's sandbox session, not in Node.
/**
 * The façade mounted code sees, evaluated inside the mount's sandbox before the code (its source text
 * is sent; it must not close over anything in this module). Nothing here is trusted by the host: every
 * request leaves through the one host function `op` as JSON, and the host checks it (bridge.ts). The
 * façade only makes the requests convenient: `defineTool`, a `ctx` shaped like a Cordis context, and
 * the entry points the host calls (`__mount`, `__invoke`).
 *
 * Requests that change the runtime (register, listen, emit, provide, effect, timer, clear) are sent
 * without waiting. While `apply` runs they are held in order and travel with its answer (or, in one
 * `batch`, ahead of a request that answers, so the host sees them first): a usual apply costs one
 * round trip, and a refused request fails the mount. Requests that answer (tools.get/list/execute,
 * next, services) are promises the code awaits.
 *
 * @param {(request: object) => Promise<any>} op
 */
export default function guest(op) {
  'use strict'
  const O = Object
  const freeze = O.freeze
  const create = O.create
  const keys = O.keys
  const getProto = O.getPrototypeOf
  const define = O.defineProperty
  const ObjectProto = O.prototype
  const ErrorCtor = Error
  const TypeErrorCtor = TypeError
  const PromiseCtor = Promise
  const ProxyCtor = Proxy
  const WeakMapCtor = WeakMap
  const isArray = Array.isArray
  const warn = console.warn

  const WITHHELD = [
    'root',
    'plugin',
    'fiber',
    'registry',
    'reflect',
    'events',
    'inject',
    'runtime',
    'extend',
    'isolate',
    'intercept',
    'scope',
    'lifecycle',
    'loader',
  ]
  const PLUGIN_FORMS = 'return a plugin: a function `(ctx, config) => { … }`, or an object `{ name?, inject?, apply(ctx, config) { … } }`'

  const tickets = new WeakMapCtor()
  // Everything the host may call back, by the id it was sent under.
  const tools = create(null)
  const callbacks = create(null)
  const effects = create(null)
  const provided = create(null)
  let nextId = 0
  let plugin
  // While `apply` runs: the requests held for its answer, and the batches sent ahead of a question.
  let held
  let tracking

  const messageOf = (error) => (error instanceof ErrorCtor ? error.message : String(error))
  const readOnly = (verb, prop) => {
    throw new ErrorCtor('the context is read-only to mounted plugins (tried to ' + verb + ' ' + String(prop) + ')')
  }
  const injectOf = (inject) => (isArray(inject) ? inject.filter((name) => typeof name === 'string') : inject && typeof inject === 'object' ? keys(inject) : [])

  function send(request) {
    if (held) {
      held[held.length] = request
      return
    }
    op(request).then(undefined, (error) => warn(request.op + ' failed: ' + messageOf(error)))
  }

  function ask(request) {
    if (held && held.length) {
      const ops = held
      held = []
      tracking[tracking.length] = op({ op: 'batch', ops }).then(undefined, (error) => {
        throw new ErrorCtor(messageOf(error))
      })
    }
    return op(request).then(undefined, (error) => {
      throw new ErrorCtor(messageOf(error))
    })
  }

  const disposer = (id) =>
    freeze(function dispose() {
      send({ op: 'clear', id })
    })

  function defineTool(spec) {
    if (!spec || typeof spec !== 'object')
      throw new TypeErrorCtor('defineTool takes one object: { name, description, parameters?, output: { schema, render, presentationMeta? }, execute }')
    const { name, description, execute, output } = spec
    if (typeof name !== 'string' || typeof description !== 'string' || typeof execute !== 'function')
      throw new TypeErrorCtor('defineTool needs name, description and execute')
    if (!output || typeof output !== 'object' || typeof output.render !== 'function' || output.schema === undefined)
      throw new TypeErrorCtor('defineTool "' + name + '": output needs { schema (JSON Schema), render(args, value) → content blocks }')
    if (output.presentationMeta !== undefined && typeof output.presentationMeta !== 'function')
      throw new TypeErrorCtor('defineTool "' + name + '": output.presentationMeta must be a function (args, value) → JSON')
    const ticket = freeze(create(null))
    tickets.set(ticket, {
      name,
      description,
      parameters: spec.parameters === undefined ? { type: 'object', properties: {} } : spec.parameters,
      schema: output.schema,
      render: output.render,
      presentationMeta: output.presentationMeta,
      execute,
      timeoutMs: spec.timeoutMs,
      concurrency: spec.concurrency,
    })
    return ticket
  }

  const toolsApi = freeze({
    register(ticket) {
      const spec = ticket && typeof ticket === 'object' ? tickets.get(ticket) : undefined
      if (!spec) throw new TypeErrorCtor('ctx.tools.register accepts only tools made with defineTool(...) in this mount')
      const id = ++nextId
      tools[id] = spec
      const tool = {
        name: spec.name,
        description: spec.description,
        parameters: spec.parameters,
        outputSchema: spec.schema,
        presentationMeta: !!spec.presentationMeta,
      }
      if (spec.timeoutMs !== undefined) tool.timeoutMs = spec.timeoutMs
      if (spec.concurrency !== undefined) tool.concurrency = spec.concurrency
      send({ op: 'register', id, tool })
      return disposer(id)
    },
    get: (name) => ask({ op: 'get', name }),
    list: () => ask({ op: 'list' }),
    execute: (input) => ask({ op: 'execute', input }),
  })

  function callback(fn, what) {
    if (typeof fn !== 'function') throw new TypeErrorCtor(what + ' takes a function')
    const id = ++nextId
    callbacks[id] = fn
    return id
  }

  // A service another mount provides: its data, and its methods as async calls into that mount.
  function serviceView(name, shape) {
    const view = create(null)
    for (const key of keys(shape.data)) view[key] = shape.data[key]
    for (const method of shape.methods) view[method] = (...args) => ask({ op: 'service', name, method, args })
    return freeze(view)
  }

  function facade(payload) {
    const services = create(null)
    for (const name of keys(payload.services)) services[name] = serviceView(name, payload.services[name])
    const service = (name) => {
      if (name === 'tools') return toolsApi
      if (name in services) return services[name]
      if (WITHHELD.includes(name))
        throw new ErrorCtor(
          'ctx.' +
            name +
            ' is withheld from mounted plugins; use ctx.tools, ctx.on, ctx.emit, ctx.provide, ctx.effect, ctx.setTimeout/setInterval and the services you declare in inject',
        )
      throw new ErrorCtor(
        'service ' + name + " is not declared: add it to the plugin's inject (inject: ['" + name + "']) to use a service another mount provides",
      )
    }
    const members = O.assign(create(null), {
      tools: toolsApi,
      config: payload.config,
      get: service,
      on(name, listener, prepend) {
        const id = callback(listener, 'ctx.on')
        send({ op: 'listen', id, event: String(name), prepend: prepend === true })
        return disposer(id)
      },
      emit(name, ...args) {
        send({ op: 'emit', event: String(name), args })
      },
      provide(name, value) {
        if (typeof name !== 'string' || !/^[a-z][\w-]*$/i.test(name)) throw new TypeErrorCtor('ctx.provide(name, value) needs a service name')
        if (!value || typeof value !== 'object') throw new TypeErrorCtor('ctx.provide(name, value): the value must be an object')
        provided[name] = value
        const methods = []
        const data = {}
        for (const key of keys(value)) if (typeof value[key] !== 'function') data[key] = value[key]
        for (let layer = value; layer && layer !== ObjectProto; layer = getProto(layer)) {
          for (const key of O.getOwnPropertyNames(layer))
            if (key !== 'constructor' && typeof value[key] === 'function' && !methods.includes(key)) methods[methods.length] = key
        }
        send({ op: 'provide', name, methods, data })
      },
      effect(execute) {
        if (typeof execute !== 'function') throw new TypeErrorCtor('ctx.effect takes a function')
        const id = ++nextId
        effects[id] = execute()
        send({ op: 'effect', id })
        return disposer(id)
      },
      setTimeout(fn, ms) {
        const id = callback(fn, 'ctx.setTimeout')
        send({ op: 'timer', id, ms: Number(ms) || 0, repeat: false })
        return disposer(id)
      },
      setInterval(fn, ms) {
        const id = callback(fn, 'ctx.setInterval')
        send({ op: 'timer', id, ms: Number(ms) || 0, repeat: true })
        return disposer(id)
      },
    })
    return new ProxyCtor(create(null), {
      get(_target, prop) {
        if (typeof prop === 'symbol' || prop === 'then') return undefined
        if (prop in members) return members[prop]
        return service(prop)
      },
      has: (_target, prop) => typeof prop === 'string' && (prop in members || prop in services),
      set: (_target, prop) => readOnly('set', prop),
      defineProperty: (_target, prop) => readOnly('define', prop),
      deleteProperty: (_target, prop) => readOnly('delete', prop),
      ownKeys: () => [...keys(members), ...keys(services)],
      getOwnPropertyDescriptor(_target, prop) {
        if (typeof prop !== 'string' || !(prop in members || prop in services)) return undefined
        return { configurable: true, enumerable: true, writable: false, value: members[prop] ?? services[prop] }
      },
      getPrototypeOf: () => null,
    })
  }

  function readPlugin(value) {
    if (typeof value === 'function') return { apply: value, name: value.name || '<anonymous>', inject: injectOf(value.inject) }
    if (value && typeof value === 'object' && typeof value.apply === 'function') {
      return { apply: value.apply, name: typeof value.name === 'string' && value.name ? value.name : '<anonymous>', inject: injectOf(value.inject) }
    }
    return undefined
  }

  // Runs the code (wrapped in `load`) and keeps the plugin it returned: its name and inject for the host.
  async function mount(load) {
    let value
    try {
      value = await load()
    } catch (error) {
      return { threw: messageOf(error) }
    }
    plugin = readPlugin(value)
    if (plugin) return { name: plugin.name, inject: plugin.inject }
    return {
      notPlugin: value === undefined ? 'the code returned nothing; ' + PLUGIN_FORMS : 'the code returned ' + typeof value + ', not a plugin; ' + PLUGIN_FORMS,
    }
  }

  async function apply(payload) {
    held = []
    tracking = []
    try {
      await plugin.apply.call(undefined, facade(payload), payload.config)
      for (let index = 0; index < tracking.length; index++) await tracking[index]
      return { ops: held }
    } catch (error) {
      return { threw: messageOf(error) }
    } finally {
      held = undefined
      tracking = undefined
    }
  }

  async function runTool(payload) {
    const spec = tools[payload.id]
    if (!spec) return { threw: 'the tool is no longer registered in its mount' }
    let value
    try {
      value = await spec.execute(payload.args, freeze(payload.exec))
    } catch (error) {
      return { threw: messageOf(error) }
    }
    if (value === undefined) return { threw: 'execute returned undefined, which is not JSON; return a value matching the output schema' }
    const reply = { value }
    try {
      reply.content = spec.render(payload.args, value)
      if (reply.content === undefined) {
        delete reply.content
        reply.renderError = 'render returned undefined; return content blocks such as [{ type: "text", text }]'
      }
    } catch (error) {
      reply.renderError = messageOf(error)
    }
    if (payload.meta && spec.presentationMeta) {
      try {
        reply.meta = spec.presentationMeta(payload.args, value)
        if (reply.meta === undefined) reply.meta = null
      } catch (error) {
        reply.metaError = messageOf(error)
      }
    }
    return reply
  }

  async function listen(payload) {
    const listener = callbacks[payload.id]
    if (!listener) return {}
    const args = payload.args
    if (payload.invocation !== undefined) args[args.length] = () => ask({ op: 'next', invocation: payload.invocation })
    try {
      const decision = await listener(...args)
      return decision === undefined ? {} : { decision }
    } catch (error) {
      return { threw: messageOf(error) }
    }
  }

  async function dispose(id) {
    const effect = effects[id]
    delete effects[id]
    const cleanup = effect && typeof effect.then === 'function' ? await effect : effect
    if (typeof cleanup === 'function') await cleanup()
    return {}
  }

  async function invoke(payload) {
    switch (payload.kind) {
      case 'apply':
        return apply(payload)
      case 'tool':
        return runTool(payload)
      case 'listen':
        return listen(payload)
      case 'timer': {
        const fn = callbacks[payload.id]
        try {
          if (fn) await fn()
          return {}
        } catch (error) {
          return { threw: messageOf(error) }
        }
      }
      case 'dispose':
        try {
          return await dispose(payload.id)
        } catch (error) {
          return { threw: messageOf(error) }
        }
      case 'service': {
        const target = provided[payload.name]
        const fn = target && target[payload.method]
        if (typeof fn !== 'function') return { threw: 'service ' + payload.name + ' has no method ' + payload.method }
        try {
          const value = await fn.apply(target, payload.args)
          return { value: value === undefined ? null : value }
        } catch (error) {
          return { threw: messageOf(error) }
        }
      }
    }
    return { threw: 'unknown invocation ' + payload.kind }
  }

  define(globalThis, 'defineTool', { value: freeze(defineTool), enumerable: false })
  define(globalThis, '__mount', { value: freeze(mount), enumerable: false })
  define(globalThis, '__invoke', { value: freeze(invoke), enumerable: false })
  return PromiseCtor.resolve()
}
