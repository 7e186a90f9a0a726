// @ts-nocheck -- QuickJS code: it runs in the sandbox, not in Node.
/**
 * The code evaluated inside each fresh QuickJS context before the program (the worker evaluates this
 * function's source text there, so it must not close over anything in this module). It captures the
 * intrinsics it needs first, so a program that patches `Object.prototype` or `JSON` can only break its
 * own view: the host only ever receives strings, which it parses itself.
 *
 * Protocol (see protocol.ts): `host('L' + text)` appends a log line. Calls are queued in an outbox the
 * worker drains after each pump (one crossing per batch instead of one callback per call).
 * `prelude(host)` returns `[bind, settle, finish, describe, drain, watch, track, harvest]`:
 *   bind(toolNamesJson, hostNamesJson) defines `tools`, the host functions, `console` is defined earlier;
 *   settle(`<id>\n1<value JSON>` | `<id>\n0<failure JSON: { message, code, info? }>`) resolves or rejects call `<id>`;
 *   finish() → the JSON text of the program's return value (undefined for undefined), or throws
 *     (what the program threw, or a TypeError naming the first non-JSON part of the value);
 *   describe(error) → a printable description of an uncaught exception;
 *   drain() → the program's state (`0` pending, `1` returned, `2` threw) followed, while pending, by
 *     the queued `<id>\n<wire name>\n<arguments JSON>` submissions, joined by U+0001;
 *   watch(promise) → records the state of the program's promise for `drain` and `finish`;
 *   track(id, promise) → (sessions) records how one invocation's promise settles, for `harvest`;
 *   harvest() → (sessions) the JSON text of an array of `<id>\n1<value JSON>` | `<id>\n0<description>`
 *     entries for the invocations settled since the last harvest (`<id>\n1` alone: undefined).
 *
 * @param {(payload: string) => void} host
 * @returns {Function[]}
 */
export default function prelude(host) {
  'use strict'
  const O = Object,
    freeze = O.freeze,
    getProto = O.getPrototypeOf,
    keys = O.keys,
    ownKeys = Reflect.ownKeys
  const describeProp = O.getOwnPropertyDescriptor,
    define = O.defineProperty,
    create = O.create,
    isArray = Array.isArray
  const stringify = JSON.stringify,
    parse = JSON.parse,
    ObjectProto = O.prototype,
    ArrayProto = Array.prototype
  const isFiniteNumber = Number.isFinite,
    same = O.is,
    PromiseCtor = Promise,
    ErrorCtor = Error,
    StringCtor = String
  const then = PromiseCtor.prototype.then,
    apply = Reflect.apply

  // The path of the value being encoded, as keys; turned into text only for an error message.
  const IDENT = /^[A-Za-z_$][\w$]*$/
  function offence(path, reason) {
    let text = '$'
    for (let i = 0; i < path.length; i++) {
      const key = path[i]
      text += typeof key === 'number' ? '[' + key + ']' : IDENT.test(key) ? '.' + key : '[' + stringify(key) + ']'
    }
    return new TypeError(text + ': ' + reason)
  }

  // Lossless JSON text of a value, or a TypeError naming the path of the first offence.
  function encode(value, path, active) {
    switch (typeof value) {
      case 'string':
        return stringify(value)
      case 'boolean':
        return value ? 'true' : 'false'
      case 'number':
        if (!isFiniteNumber(value)) throw offence(path, value + ' is not JSON')
        if (same(value, -0)) throw offence(path, '-0 is not JSON (it would become 0)')
        return '' + value
      case 'object':
        break
      default:
        throw offence(path, (value === undefined ? 'undefined' : 'a ' + typeof value) + ' is not JSON')
    }
    if (value === null) return 'null'
    for (let i = 0; i < active.length; i++) if (active[i] === value) throw offence(path, 'cycle: the value contains itself')
    active[active.length] = value
    let out
    const names = ownKeys(value)
    const depth = path.length
    if (isArray(value)) {
      if (getProto(value) !== ArrayProto) throw offence(path, 'an array subclass is not JSON')
      const length = value.length
      if (names.length !== length + 1) throw offence(path, 'sparse arrays and named array properties are not JSON')
      out = '['
      for (let i = 0; i < length; i++) {
        path[depth] = i
        const slot = describeProp(value, i)
        if (!slot) throw offence(path, 'sparse array hole is not JSON')
        if (!('value' in slot)) throw offence(path, 'accessors are not JSON')
        out += (i ? ',' : '') + encode(slot.value, path, active)
      }
      out += ']'
    } else {
      const proto = getProto(value)
      if (proto !== ObjectProto && proto !== null) throw offence(path, 'a class instance is not JSON (only plain objects and arrays are)')
      out = '{'
      for (let i = 0; i < names.length; i++) {
        const key = names[i]
        if (typeof key !== 'string') throw offence(path, 'symbol-keyed properties are not JSON')
        path[depth] = key
        const slot = describeProp(value, key)
        if (!slot.enumerable) throw offence(path, 'non-enumerable properties are not JSON')
        if (!('value' in slot)) throw offence(path, 'accessors are not JSON')
        out += (i ? ',' : '') + stringify(key) + ':' + encode(slot.value, path, active)
      }
      out += '}'
    }
    path.length = depth
    active.length--
    return out
  }

  function deepFreeze(root) {
    const stack = [root]
    while (stack.length) {
      const item = stack.pop()
      if (typeof item !== 'object' || item === null) continue
      freeze(item)
      const names = keys(item)
      for (let i = 0; i < names.length; i++) stack[stack.length] = item[names[i]]
    }
    return root
  }

  function show(value) {
    try {
      if (typeof value === 'string') return value
      if (value === undefined) return 'undefined'
      if (typeof value === 'function') return '[Function' + (value.name ? ': ' + value.name : '') + ']'
      if (typeof value === 'bigint') return StringCtor(value) + 'n'
      if (typeof value === 'symbol') return value.toString()
      if (value instanceof ErrorCtor) return value.name + ': ' + value.message
      const text = stringify(value)
      return text === undefined ? StringCtor(value) : text
    } catch (error) {
      try {
        return StringCtor(value)
      } catch (again) {
        return '[unprintable]'
      }
    }
  }

  // A failed call: `code` to route on (the failure's CordageError code, TOOL_FAILED for a plain error),
  // `info` the failure's `{ name, code }` when the tool threw a CordageError (undefined otherwise).
  class ToolCallError extends ErrorCtor {
    constructor(toolName, message, code, info) {
      super(message)
      define(this, 'toolName', { value: toolName, enumerable: true })
      define(this, 'code', { value: code, enumerable: true })
      define(this, 'info', { value: info === undefined ? undefined : freeze(info), enumerable: true })
    }
  }
  define(ToolCallError.prototype, 'name', { value: 'ToolCallError' })
  freeze(ToolCallError.prototype)
  freeze(ToolCallError)

  const pending = create(null)
  let nextId = 0
  let outbox = ''
  // `wire` is what the host routes on (a tool name, or ':' + a host function name); `label` is the
  // name a ToolCallError reports.
  function call(wire, label, args) {
    let text
    try {
      text = args === undefined ? '{}' : encode(args, [], [])
    } catch (error) {
      return PromiseCtor.reject(new ToolCallError(label, 'the arguments are not JSON: ' + error.message, 'INVALID_ARGS'))
    }
    return new PromiseCtor(function (resolve, reject) {
      const id = ++nextId
      pending[id] = [label, resolve, reject]
      outbox += (outbox ? '\u0001' : '') + id + '\n' + wire + '\n' + text
    })
  }

  function method(wire, label) {
    const fn = function (args) {
      return call(wire, label, args)
    }
    define(fn, 'name', { value: label })
    return freeze(fn)
  }

  // Binds `tools.<name>` for each tool, and each host function at its dotted path (`agents.run`
  // becomes a frozen `agents` object with a `run` method). Called once, before the program runs.
  function bind(toolNames, hostNames) {
    const tools = create(null)
    for (const name of parse(toolNames)) tools[name] = method(name, name)
    define(globalThis, 'tools', { value: freeze(tools), enumerable: false })
    const roots = create(null)
    for (const path of parse(hostNames)) {
      const parts = path.split('.')
      let holder = roots
      for (let i = 0; i < parts.length - 1; i++) holder = holder[parts[i]] ??= create(null)
      holder[parts[parts.length - 1]] = method(':' + path, path)
    }
    for (const name of keys(roots)) {
      define(globalThis, name, { value: typeof roots[name] === 'function' ? roots[name] : deepFreeze(roots[name]), enumerable: false })
    }
  }
  define(globalThis, 'ToolCallError', { value: ToolCallError, enumerable: false })

  const log = function () {
    let line = ''
    for (let i = 0; i < arguments.length; i++) line += (i ? ' ' : '') + show(arguments[i])
    host('L' + line)
  }
  const console = create(null)
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) console[level] = log
  define(globalThis, 'console', { value: freeze(console), enumerable: false })

  function settle(payload) {
    const cut = payload.indexOf('\n')
    const id = payload.slice(0, cut)
    const entry = pending[id]
    if (!entry) return
    delete pending[id]
    if (payload[cut + 1] === '1') {
      let value
      try {
        value = deepFreeze(parse(payload.slice(cut + 2)))
      } catch (error) {
        entry[2](error)
        return
      }
      entry[1](value)
    } else {
      // `{ message, code, info? }`, written by the host (protocol.ts encodeCompletion).
      let failure
      try {
        failure = parse(payload.slice(cut + 2))
      } catch (error) {
        failure = { message: payload.slice(cut + 2), code: 'TOOL_FAILED' }
      }
      const info = failure.info && typeof failure.info === 'object' ? { name: StringCtor(failure.info.name), code: StringCtor(failure.info.code) } : undefined
      entry[2](new ToolCallError(entry[0], StringCtor(failure.message), StringCtor(failure.code), info))
    }
  }

  // The program's own promise, watched through the intrinsic `then` (the program may have patched
  // Promise.prototype.then by the time `watch` runs): 0 pending, 1 fulfilled, 2 rejected.
  let state = 0
  let outcome
  function watch(main) {
    apply(then, main, [
      function (value) {
        state = 1
        outcome = value
      },
      function (error) {
        state = 2
        outcome = error
      },
    ])
  }

  // The JSON text of the program's return value (undefined for undefined); rethrows what it threw.
  function finish() {
    if (state === 2) throw outcome
    return outcome === undefined ? undefined : encode(outcome, [], [])
  }

  function describe(error) {
    try {
      if (error instanceof ErrorCtor) {
        const stack = typeof error.stack === 'string' && error.stack ? '\n' + error.stack.replace(/\n$/, '') : ''
        return error.name + ': ' + error.message + stack
      }
      return 'Uncaught ' + show(error)
    } catch (failure) {
      return 'Uncaught (unprintable value)'
    }
  }

  // Calls submitted since the last drain, '\u0001'-separated (JSON text never contains U+0001 raw).
  // Prefixed with the program's state: once it settled, queued calls are dropped, never handed over.
  function drain() {
    const out = outbox
    outbox = ''
    return state + (state === 0 ? out : '')
  }

  // Invocations of a session (worker `invoke`) settled since the last harvest. Each value is encoded
  // as it settles, so a value that is not JSON fails its own invocation, never the session.
  let settled = []
  function track(id, promise) {
    apply(then, promise, [
      function (value) {
        let text
        try {
          text = value === undefined ? '' : encode(value, [], [])
        } catch (error) {
          settled[settled.length] = id + '\n0' + describe(error)
          return
        }
        settled[settled.length] = id + '\n1' + text
      },
      function (error) {
        settled[settled.length] = id + '\n0' + describe(error)
      },
    ])
  }

  function harvest() {
    const out = settled
    settled = []
    return stringify(out)
  }

  return [bind, settle, finish, describe, drain, watch, track, harvest]
}
