import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { failureOf, lookup, setup, sleeper, valueOf } from './helpers.js'

// Generous CPU time: the suite shares the machine with others; the limits under test are the point.
const limits = { cpuTimeMs: 1500, timeoutMs: 10_000, memoryBytes: 8 << 20, maxOutputBytes: 2000, maxCalls: 20 }

describe('sandbox limits: each breach is a CODE_RUN_FAILED result and the host keeps working', () => {
  it.each([
    ['cpu', 'console.log("start"); while (true) {}', /^run_code failed \(cpu\): the program used more than 200 ms of CPU time/],
    ['cpu', 'while (true) { try { for (;;) {} } catch (error) { console.log("caught", error) } }', /^run_code failed \(cpu\)/],
    ['cpu', 'return /(a+)+b/.test("a".repeat(40))', /^run_code failed \(cpu\)/],
    ['memory', 'const hoard = []; while (true) hoard.push([hoard.length, { at: hoard.length }])', /^run_code failed \(memory\): InternalError: out of memory/],
    ['memory', 'let s = "x"; while (true) s = s + s', /^run_code failed \(memory\)/],
    [
      'output',
      'for (let i = 0; ; i++) console.log("line " + i + " " + "x".repeat(50))',
      /^run_code failed \(output\): the program's logs and result exceeded 2000 bytes/,
    ],
    ['output', 'return "y".repeat(5000)', /^run_code failed \(output\): the program's result is 5002 bytes of JSON/],
    ['calls', 'for (let i = 0; i < 100; i++) await tools.lookup({ id: i })', /^run_code failed \(calls\): the program made more than 20 tool calls/],
    ['syntax', 'return (', /^run_code failed \(syntax\): SyntaxError/],
    ['runtime', 'process.exit(1)', /^run_code failed \(runtime\): ReferenceError: 'process' is not defined/],
    ['runtime', 'require("fs")', /^run_code failed \(runtime\): ReferenceError: 'require' is not defined/],
    ['runtime', 'await import("fs")', /^run_code failed \(runtime\): ReferenceError: could not load module 'fs'/],
    ['runtime', 'setTimeout(() => {}, 10)', /^run_code failed \(runtime\): ReferenceError: 'setTimeout' is not defined/],
    ['runtime', 'await new Promise(() => {})', /^run_code failed \(runtime\): the program is waiting for a promise that can never settle/],
    ['runtime', 'function f() { return f() } return f()', /^run_code failed \(runtime\): InternalError: stack overflow/],
    ['runtime', 'return () => 1', /^run_code failed \(runtime\): the program's return value is not JSON: \$: a function is not JSON/],
    ['runtime', 'throw "a string"', /^run_code failed \(runtime\): Uncaught a string/],
  ])('%s: %s', async (kind, code, message) => {
    // Memory cases get a small heap and a CPU budget they cannot reach first on a busy machine; CPU cases
    // a small budget (the program's own CPU time, which other load on the machine does not use up).
    const config = kind === 'memory' ? { ...limits, memoryBytes: 2 << 20, cpuTimeMs: 60_000 } : kind === 'cpu' ? { ...limits, cpuTimeMs: 200 } : limits
    const { run } = await setup([lookup], config)
    const failure = failureOf(await run(code))
    expect(failure.code).toBe('CODE_RUN_FAILED')
    expect(failure.message).toMatch(message)
    expect(failure.message.length).toBeLessThan(6000)
    expect(valueOf(await run('return (await tools.lookup({ id: 1 })).name'))).toEqual({ logs: [], result: 'user-1' })
  })

  it('reports a heap exhausted by a long promise chain as memory, and a thrown null as the program threw it', async () => {
    // Past the cap QuickJS cannot even allocate its "out of memory" error and throws null instead.
    const { run } = await setup([lookup], { cpuTimeMs: 60_000 })
    const chain = failureOf(await run('let p = Promise.resolve(0); for (let i = 0; i < 3e6; i++) p = p.then((v) => v + 1); return await p'))
    expect(chain.message).toMatch(/^run_code failed \(memory\): the program exceeded the memory limit of 33554432 bytes/)
    expect(failureOf(await run('throw null')).message).toMatch(/^run_code failed \(runtime\): Uncaught null/)
  })

  it('fails a run whose single built-in call overran the CPU budget, though it could not be interrupted', async () => {
    const { run } = await setup([], { cpuTimeMs: 1, memoryBytes: 64 << 20 })
    const failure = failureOf(await run('return "x".repeat(2e7).length'))
    expect(failure.message).toMatch(/^run_code failed \(cpu\): the program used more than 1 ms of CPU time/)
  })

  it('counts only time inside the VM as CPU: no program is stopped by an interrupt poll between its steps', async () => {
    // QuickJS polls its interrupt handler once per 10 000 ticks of a counter (a loop iteration takes two). A
    // poll landing in the worker's own call into the VM right after the program's first segment once read
    // as the whole time since 1970. One program per counter position: loops of 0 to 4 999 iterations.
    const { ctx } = await setup([], { poolSize: 4 })
    const runner = ctx.get('codeMode')!
    const stopped: string[] = []
    for (let start = 0; start < 5000; start += 4) {
      await Promise.all(
        [0, 1, 2, 3].map((offset) =>
          runner
            .run({ code: `for (let i = 0; i < ${start + offset}; i++) {} return 1` })
            .catch((error: Error) => void stopped.push(`${start + offset}: ${error.message.split('\n')[0]}`)),
        ),
      )
    }
    expect(stopped).toEqual([])
  }, 60_000)

  it.each([
    ['throws', "throw new Error('species')", /^run_code failed \(runtime\): Error: species/],
    ['spins', 'for (;;) {}', /^run_code failed \(cpu\): the program used more than 200 ms of CPU time/],
  ])('meters and reports a promise-constructor getter that %s when the worker watches the program', async (_label, body, message) => {
    // Watching the program's promise reads its `constructor` (Promise species): that runs the program's getter.
    const { run } = await setup([lookup], { cpuTimeMs: 200 })
    const failure = failureOf(await run(`Object.defineProperty(Promise.prototype, 'constructor', { get() { ${body} } }); return 1`))
    expect(failure.message).toMatch(message)
    expect(valueOf(await run('return 2'))).toEqual({ logs: [], result: 2 })
  })

  it('stops at the wall-clock timeout while waiting for a slow tool, and aborts that tool', async () => {
    const log: any[] = []
    // 1 s, not less: on a busy machine a worker can take a few hundred ms to reach the first line.
    const { run } = await setup([sleeper('slow', 'exclusive', log)], { timeoutMs: 1000 })
    const failure = failureOf(await run('console.log("waiting"); await tools.slow({ id: 1, ms: 20000 })'))
    expect(failure.message).toMatch(/^run_code failed \(timeout\): the program did not finish within 1000 ms[\s\S]*\nwaiting$/)
    expect(log).toMatchObject([{ name: 'slow', id: 1, aborted: true }])
  })

  it('keeps the logs captured before an output overflow, cut at the cap', async () => {
    const { run } = await setup([], { maxOutputBytes: 100 })
    const failure = failureOf(await run('console.log("first"); console.log("z".repeat(500))'))
    expect(failure.message).toMatch(/Logs before the failure:\nfirst\nz+…$/)
  })

  it('survives native-stack exhaustion in a built-in and resets the sandbox', async () => {
    const { run } = await setup([lookup], { cpuTimeMs: 60_000, memoryBytes: 64 << 20 })
    const failure = failureOf(await run('let a = []; for (let i = 0; i < 200000; i++) a = [a]; return JSON.stringify(a).length'))
    expect(failure.message).toMatch(/^run_code failed \((memory|runtime)\)/)
    expect(valueOf(await run('return 2'))).toEqual({ logs: [], result: 2 })
  })

  it('contains prototype pollution: the host and later runs are unaffected, results are plain host objects', async () => {
    const { run } = await setup([lookup])
    const value = valueOf(
      await run(`
      Object.prototype.polluted = 1
      Array.prototype.push = () => 0
      JSON.parse = () => ({ hacked: true })
      Object.freeze = (x) => x
      const user = await tools.lookup({ id: 3 })
      return { name: user.name, frozen: Object.isFrozen(user), polluted: ({}).polluted, ["__proto__"]: { evil: true } }
    `),
    )
    expect(value.result).toMatchObject({ name: 'user-3', frozen: true, polluted: 1 })
    expect(Object.getPrototypeOf(value.result)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(value.result, '__proto__')?.value).toEqual({ evil: true })
    expect(({} as any).polluted).toBeUndefined()
    expect(({} as any).evil).toBeUndefined()
    expect(valueOf(await run('return ({}).polluted'))).toEqual({ logs: [] })
  })

  it('still sees the program settle when it patched Promise.prototype.then before its first await', async () => {
    const { run } = await setup([lookup])
    const value = valueOf(
      await run('Promise.prototype.then = function () { throw new Error("patched") }; const user = await tools.lookup({ id: 5 }); return user.id'),
    )
    expect(value).toEqual({ logs: [], result: 5 })
  })

  it('runs each program in a fresh context: globals do not leak between runs', async () => {
    const { run } = await setup([])
    await run('globalThis.leftover = 42')
    expect(valueOf(await run('return typeof leftover'))).toEqual({ logs: [], result: 'undefined' })
  })

  it('does not let a program reach the host through tools, console or ToolCallError', async () => {
    const { run } = await setup([lookup])
    const value = valueOf(
      await run(`
      const probes = [
        () => tools.lookup.constructor('return typeof process')(),
        () => console.log.constructor('return typeof require')(),
        () => ToolCallError.constructor('return typeof globalThis.Buffer')(),
      ]
      return probes.map((probe) => probe())
    `),
    )
    expect(value.result).toEqual(['undefined', 'undefined', 'undefined'])
  })
})

describe('values too large for the sandbox', () => {
  const big = defineTool({
    name: 'big',
    description: 'Returns 40 MB of text.',
    parameters: Schema.object({}),
    output: { schema: Schema.object({ text: Schema.string().required() }), render: () => [{ type: 'text', text: 'big' }] },
    execute: () => ({ text: 'x'.repeat(40e6) }),
  })

  it('rejects the call with a catchable ToolCallError instead of exhausting the heap', async () => {
    const { run } = await setup([big], { memoryBytes: 8 << 20 })
    const value = valueOf(await run('try { await tools.big({}) } catch (error) { return [error.name, error.toolName, error.message] }'))
    expect(value.result).toEqual([
      'ToolCallError',
      'big',
      expect.stringMatching(/^the value is 40000011 characters of JSON, too large for the sandbox \(memoryBytes 8388608\)/),
    ])
  })
})

describe('values that fit the bound but not the heap left', () => {
  const near = defineTool({
    name: 'near',
    description: 'Returns text of the given length.',
    parameters: Schema.object({ n: Schema.natural().required() }),
    output: { schema: Schema.object({ text: Schema.string().required() }), render: () => [{ type: 'text', text: 'near' }] },
    execute: (args) => ({ text: 'x'.repeat(args.n) }),
  })

  it('fail the run as memory wherever the allocation fails, never by crashing the interpreter', async () => {
    // A 1 MB value is within the bound for 2 MiB (half of memoryBytes), but the program first fills the heap
    // by a varying amount, so the completion's text, its VM string or its parse runs out of memory in turn.
    const { run } = await setup([near], { memoryBytes: 2 << 20, cpuTimeMs: 60_000 })
    const outcomes = new Set<string>()
    for (let hog = 6000; hog <= 13_000; hog += 250) {
      const result = await run(
        `const hog = []; for (let i = 0; i < ${hog}; i++) hog.push("y".repeat(1000) + i); return (await tools.near({ n: 1000000 })).text.length`,
      )
      outcomes.add(result.isError ? (result.error.message.match(/^run_code failed \((\w+)\)/)?.[1] ?? result.error.message) : 'ok')
    }
    expect([...outcomes].sort()).toEqual(['memory', 'ok'])
    expect(valueOf(await run('return 1')).result).toBe(1)
  })
})

describe('returned values', () => {
  const weird = defineTool({
    name: 'weird',
    description: 'Returns a value with a __proto__ key.',
    parameters: Schema.object({}),
    output: { schema: Schema.dict(Schema.any()), render: () => [{ type: 'text', text: 'w' }] },
    execute: () => JSON.parse('{"__proto__": {"x": 1}, "y": 2}'),
  })

  it('passes keys named __proto__ through as plain data in both directions', async () => {
    const { run } = await setup([weird])
    const value = valueOf(await run('const v = await tools.weird({}); return { own: Object.keys(v), inherited: "x" in v, inner: v["__proto__"].x }')).result
    expect(value).toEqual({ own: ['__proto__', 'y'], inherited: false, inner: 1 })
  })
})
