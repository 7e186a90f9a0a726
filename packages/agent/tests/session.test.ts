import { appendFileSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { createTestContext, ScriptedModel, type ScriptStep } from '@cordage/testing'
import { Agent, SessionLog, deriveMessages, loadSession, resolveSessionFile, type SessionEvent } from '../src/index.js'
import { Gate, noteTool, secretTool, sleepTool, tempDir, type Interval } from './helpers.js'

const MARKER = 'CANONICAL-ONLY-7f3a9c'

async function setup(turns: ScriptStep[]) {
  const ctx = await createTestContext({ print: false })
  ctx.tools.register(secretTool(MARKER))
  await ctx.plugin(ScriptedModel, { turns })
  return { ctx, model: ctx.get('model') as unknown as ScriptedModel }
}

function lines(file: string): any[] {
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line))
}

const twoLookups: ScriptStep[] = [
  {
    text: ['Looking ', 'up.'],
    toolCalls: [
      { name: 'lookup', arguments: { key: 'alpha' } },
      { name: 'lookup', arguments: { key: 'beta' } },
    ],
  },
  { text: 'Both found.' },
]

describe('session log', () => {
  it('writes a header and one event per line, with tool/result content and never the canonical value', async () => {
    const cwd = await tempDir()
    const { ctx } = await setup(twoLookups)
    const session = SessionLog.create({ cwd, model: 'scripted' })
    expect(session.file).toBe(join(cwd, '.cordage', 'sessions', `${session.id}.jsonl`))
    await new Agent(ctx, { session, system: 'Be brief.' }).run('Find alpha and beta.')
    await session.close({ reason: 'completed' })
    const text = readFileSync(session.file, 'utf8')
    expect(text).not.toContain(MARKER)
    const [header, ...events] = lines(session.file)
    expect(header).toEqual({ type: 'session', version: 1, id: session.id, createdAt: expect.any(String), cwd, model: 'scripted' })
    expect(events.map((event) => event.type)).toEqual([
      'system/message',
      'user/message',
      'assistant/message',
      'tool/result',
      'tool/result',
      'assistant/message',
      'run/end',
      'session/end',
    ])
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(events[3].data).toEqual({
      callId: 'call_1_0',
      name: 'lookup',
      content: [{ type: 'text', text: 'found alpha' }],
      isError: false,
      meta: { key: 'alpha' },
    })
    expect(events[2].data).toMatchObject({
      content: 'Looking up.',
      toolCalls: [
        { id: 'call_1_0', name: 'lookup', arguments: '{"key":"alpha"}' },
        { id: 'call_1_1', name: 'lookup', arguments: '{"key":"beta"}' },
      ],
    })
    expect(events[6].data).toMatchObject({ stopReason: 'completed', turns: 2 })
    expect(events[7].data).toEqual({ reason: 'completed' })
    expect(resolveSessionFile(session.id, { cwd })).toBe(session.file)
  })

  it('records failures with their message and code', async () => {
    const cwd = await tempDir()
    const { ctx } = await setup([{ toolCalls: [{ name: 'nope', arguments: {} }] }, { text: 'ok' }])
    const session = SessionLog.create({ cwd })
    await new Agent(ctx, { session }).run('go')
    const result = session.events.find((event) => event.type === 'tool/result')!
    expect(result.data).toEqual({
      callId: 'call_1_0',
      name: 'nope',
      isError: true,
      content: [{ type: 'text', text: 'Error: unknown tool "nope"; available: lookup' }],
      error: { message: 'unknown tool "nope"; available: lookup', code: 'UNKNOWN_TOOL' },
    })
  })

  it('replays (deriveMessages on the file) byte for byte what the model received', async () => {
    const cwd = await tempDir()
    const { ctx, model } = await setup([
      {
        text: 'Looking.',
        toolCalls: [
          { name: 'lookup', arguments: { key: 'alpha' } },
          { name: 'note', arguments: { text: 'ünïcode ✓ "quoted"\n' } },
        ],
      },
      { toolCalls: [{ name: 'missing', arguments: '{bad' }] },
      { text: 'Done.' },
    ])
    ctx.tools.register(noteTool())
    const session = SessionLog.create({ cwd })
    const agent = new Agent(ctx, { session, system: 'sys' })
    await agent.run('first')
    await session.close()
    const replayed = deriveMessages(loadSession(session.file).events)
    expect(JSON.stringify(replayed)).toBe(JSON.stringify(agent.messages))
    expect(model.requests).toHaveLength(3)
    for (const request of model.requests) {
      expect(JSON.stringify(replayed.slice(0, request.messages.length))).toBe(JSON.stringify(request.messages))
    }
    expect(replayed.at(-1)).toEqual({ role: 'assistant', content: 'Done.' })
    expect(replayed).toContainEqual({ role: 'user', content: '<context source="lint">\nünïcode ✓ "quoted"\n\n</context>' })
  })

  it('resumes a session whose last line was cut mid-write, repairing the call left without a result', async () => {
    const cwd = await tempDir()
    const first = await setup(twoLookups)
    const session = SessionLog.create({ cwd })
    await new Agent(first.ctx, { session }).run('Find alpha and beta.')
    await session.close(false)
    // Simulate a crash while the second result was being appended: keep half of that line.
    const text = readFileSync(session.file, 'utf8')
    const start = text.indexOf('{"type":"tool/result","seq":4')
    expect(start).toBeGreaterThan(0)
    truncateSync(session.file, Buffer.byteLength(text.slice(0, start + 40)))

    const loaded = loadSession(session.file)
    expect(loaded.warnings).toEqual([
      expect.stringMatching(/^dropped a torn last line \(40 bytes\)/),
      'tool call call_1_1 (lookup) had no result; recorded ABORTED_BEFORE_DISPATCH',
    ])

    const second = await setup([{ text: 'Resumed.' }])
    const resumed = SessionLog.open(session.file)
    const agent = new Agent(second.ctx, { session: resumed })
    const result = await agent.run()
    await resumed.close()
    expect(result).toMatchObject({ text: 'Resumed.', stopReason: 'completed' })
    const [request] = second.model.requests
    expect(request.messages.at(-1)).toEqual({
      role: 'tool',
      callId: 'call_1_1',
      name: 'lookup',
      isError: true,
      content: [
        {
          type: 'text',
          text: "Error: the session ended before this call's result was recorded; it may or may not have run, so check its effects before retrying",
        },
      ],
    })
    // The file is whole again: every line parses, no warnings, and it replays what both models saw.
    const reloaded = loadSession(session.file)
    expect(reloaded.warnings).toEqual([])
    expect(reloaded.events.map((event) => event.type)).toEqual([
      'user/message',
      'assistant/message',
      'tool/result',
      'tool/result',
      'assistant/message',
      'run/end',
      'session/end',
    ])
    expect(reloaded.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(reloaded.events[3]).toMatchObject({ type: 'tool/result', data: { callId: 'call_1_1', error: { code: 'ABORTED_BEFORE_DISPATCH' } } })
    expect(JSON.stringify(deriveMessages(reloaded.events).slice(0, request.messages.length))).toBe(JSON.stringify(request.messages))
  })

  it('records a result for every call of an aborted batch, so the session resumes without repairs', async () => {
    const cwd = await tempDir()
    const intervals: Interval[] = []
    const { ctx } = await setup([
      {
        toolCalls: [
          { name: 'work', arguments: { label: 'long', held: true } },
          { name: 'work', arguments: { label: 'next' } },
        ],
      },
    ])
    const gate = new Gate()
    ctx.tools.register(sleepTool('work', 'exclusive', intervals, gate))
    const session = SessionLog.create({ cwd })
    const controller = new AbortController()
    const agent = new Agent(ctx, { session })
    const running = agent.run('go', { signal: controller.signal })
    await gate.whenRunning(['long'])
    controller.abort()
    expect(await running).toMatchObject({ stopReason: 'aborted' })
    await session.close({ reason: 'aborted' })
    const loaded = loadSession(session.file)
    expect(loaded.warnings).toEqual([])
    expect(loaded.events.filter((event) => event.type === 'tool/result').map((event) => (event.data as { error?: { code?: string } }).error?.code)).toEqual([
      'ABORTED',
      'ABORTED_BEFORE_DISPATCH',
    ])
    expect(intervals.map((interval) => interval.label)).toEqual(['long'])
  })

  it('continues a complete last line that lost only its newline', async () => {
    const cwd = await tempDir()
    const { ctx } = await setup([{ text: 'one' }, { text: 'two' }])
    const session = SessionLog.create({ cwd })
    await new Agent(ctx, { session }).run('a')
    await session.close(false)
    writeFileSync(session.file, readFileSync(session.file, 'utf8').trimEnd())
    const resumed = SessionLog.open(session.file)
    expect(resumed.warnings).toEqual([])
    await new Agent(ctx, { session: resumed }).run('b')
    await resumed.close()
    expect(deriveMessages(loadSession(session.file).events).map((message) => message.content)).toEqual(['a', 'one', 'b', 'two'])
  })

  it('cuts a torn tail at its byte offset when an earlier line holds bytes that are not UTF-8, keeping every line', async () => {
    const cwd = await tempDir()
    const session = SessionLog.create({ cwd })
    await session.close(false)
    // An intact event whose text has two stray bytes (each read back as a three-byte U+FFFD), then a torn line.
    const odd = Buffer.concat([Buffer.from('{"type":"user/message","seq":1,"time":"t","data":{"content":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')])
    appendFileSync(session.file, Buffer.concat([odd, Buffer.from('{"type":"user/mes')]))
    const kept = readFileSync(session.file).subarray(0, readFileSync(session.file).length - '{"type":"user/mes'.length)
    const resumed = SessionLog.open(session.file)
    expect(resumed.warnings).toEqual([expect.stringContaining('dropped a torn last line (17 bytes)')])
    resumed.append('user/message', { content: 'again' })
    await resumed.close()
    const bytes = readFileSync(session.file)
    expect(bytes.subarray(0, kept.length).equals(kept)).toBe(true)
    expect(loadSession(session.file).events.map((event) => [event.seq, event.type])).toEqual([
      [1, 'user/message'],
      [2, 'user/message'],
      [3, 'session/end'],
    ])
  })

  it('appends at the end of the file from the process that created it too, never over lines another writer added', async () => {
    const cwd = await tempDir()
    const created = SessionLog.create({ cwd })
    created.append('user/message', { content: 'one' })
    // A second process continuing the same session (`cordage chat --resume` in another terminal).
    const other = SessionLog.open(created.file)
    other.append('user/message', { content: 'from the other writer' })
    created.append('user/message', { content: 'from the creator' })
    await other.close(false)
    await created.close(false)
    const contents = lines(created.file)
      .slice(1)
      .map((line) => line.data.content)
    expect(contents).toEqual(['one', 'from the other writer', 'from the creator'])
  })

  it('closes once when close() is called again before it finished: one session/end, and no append after it', async () => {
    const cwd = await tempDir()
    const session = SessionLog.create({ cwd })
    session.append('user/message', { content: 'hi' })
    const first = session.close({ reason: 'completed' })
    expect(session.closed).toBe(true)
    expect(() => session.append('user/message', { content: 'late' })).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }))
    await expect(Promise.all([first, session.close({ reason: 'unloaded' }), session.close()])).resolves.toBeDefined()
    await session.close()
    expect(lines(session.file).map((line) => line.type)).toEqual(['session', 'user/message', 'session/end'])
    expect(lines(session.file).at(-1).data).toEqual({ reason: 'completed' })
  })

  it('rejects a corrupt line that is not the last one, naming the line', async () => {
    const cwd = await tempDir()
    const session = SessionLog.create({ cwd })
    session.append('user/message', { content: 'hi' })
    await session.close()
    const text = readFileSync(session.file, 'utf8').split('\n')
    text[1] = '{oops'
    writeFileSync(session.file, text.join('\n'))
    expect(() => loadSession(session.file)).toThrow(
      expect.objectContaining({ code: 'SESSION_CORRUPT', message: expect.stringContaining(':2: not a session event') }),
    )
    expect(() => loadSession(join(cwd, 'absent.jsonl'))).toThrow(expect.objectContaining({ code: 'SESSION_NOT_FOUND' }))
    expect(() => SessionLog.create({ cwd, id: session.id })).toThrow(
      expect.objectContaining({ code: 'INVALID_SESSION_ID', message: expect.stringContaining('already exists') }),
    )
    expect(() => SessionLog.create({ cwd, id: '../escape' })).toThrow(expect.objectContaining({ code: 'INVALID_SESSION_ID' }))
  })

  it('logs nested calls made with parent as tool/code-dispatch, attributed to the direct call, without values', async () => {
    const cwd = await tempDir()
    const { ctx, model } = await setup([{ toolCalls: [{ id: 'outer', name: 'script', arguments: { keys: ['x', 'y'] } }] }, { text: 'ok' }])
    const tools = ctx.get('tools')!
    ctx.tools.register(
      defineTool({
        name: 'script',
        description: 'Runs nested lookups.',
        parameters: Schema.object({ keys: Schema.array(Schema.string()).required() }),
        output: { schema: Schema.object({ count: Schema.natural().required() }), render: (_args, value) => [{ type: 'text', text: `ran ${value.count}` }] },
        async execute(args, exec) {
          for (const key of args.keys) await tools.execute({ name: 'lookup', arguments: { key }, parent: exec.token })
          await tools.execute({ name: 'ghost', arguments: {}, parent: exec.token })
          return { count: args.keys.length + 1 }
        },
      }),
    )
    const session = SessionLog.create({ cwd })
    await new Agent(ctx, { session }).run('go')
    const dispatches = session.events.filter((event): event is SessionEvent<'tool/code-dispatch'> => event.type === 'tool/code-dispatch')
    expect(dispatches.map((event) => event.data)).toEqual([
      { parentCallId: 'outer', index: 0, name: 'lookup', arguments: { key: 'x' }, content: [{ type: 'text', text: 'found x' }], isError: false },
      { parentCallId: 'outer', index: 1, name: 'lookup', arguments: { key: 'y' }, content: [{ type: 'text', text: 'found y' }], isError: false },
      {
        parentCallId: 'outer',
        index: 2,
        name: 'ghost',
        arguments: {},
        content: [{ type: 'text', text: 'Error: unknown tool "ghost"; available: lookup, script' }],
        isError: true,
      },
    ])
    // Nested dispatches are logged but are not part of what the model sees.
    expect(JSON.stringify(deriveMessages(session.events))).toBe(JSON.stringify([...model.requests[1].messages, { role: 'assistant', content: 'ok' }]))
    // After the run nothing observes the registry: a direct call outside the agent logs nothing.
    const count = session.events.length
    await tools.execute({ name: 'script', arguments: { keys: ['z'] }, callId: 'outer' })
    expect(session.events).toHaveLength(count)
    await session.close()
    expect(readFileSync(session.file, 'utf8')).not.toContain(MARKER)
  })
})
