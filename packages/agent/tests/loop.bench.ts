import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { compare, createTestContext } from '@cordage/testing'
import { Agent, SessionLog, type CompletionRequest, type ModelEvent, type ModelService } from '../src/index.js'

// One `run` = two model turns: three parallel tool calls, then a final answer. The model is in-process,
// so these figures are the loop's own overhead (parsing, dispatch bookkeeping, commits, session writes).
const model: ModelService = {
  id: 'bench',
  async *stream(request: CompletionRequest): AsyncIterable<ModelEvent> {
    if (request.messages.at(-1)?.role === 'tool') {
      yield { type: 'text', delta: 'done' }
      yield { type: 'done', finishReason: 'stop' }
      return
    }
    for (let index = 0; index < 3; index++) yield { type: 'tool-call', call: { id: `c${index}`, name: 'lookup', arguments: `{"key":"k${index}"}` } }
    yield { type: 'done', finishReason: 'tool_calls' }
  },
}

const ctx = await createTestContext()
ctx.tools.register(defineTool({
  name: 'lookup',
  description: 'Looks up a key.',
  parameters: Schema.object({ key: Schema.string().required() }),
  output: { schema: Schema.object({ key: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: `found ${value.key}` }] },
  concurrency: 'parallel',
  execute: (args) => ({ key: args.key }),
}))
const tools = ctx.get('tools')!
const dir = mkdtempSync(join(tmpdir(), 'agent-bench-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function drain(request: CompletionRequest) {
  const calls = []
  for await (const event of model.stream(request)) if (event.type === 'tool-call') calls.push(event.call)
  return calls
}

const variants = {
  baseline: {
    name: 'stream + 3 direct executes (no loop)',
    fn: async () => {
      const calls = await drain({ messages: [{ role: 'user', content: 'go' }], tools: tools.list() })
      await Promise.all(calls.map((call) => tools.execute({ name: call.name, arguments: JSON.parse(call.arguments), callId: call.id })))
      await drain({ messages: [{ role: 'tool', callId: 'c0', name: 'lookup', content: [], isError: false }], tools: tools.list() })
    },
  },
  memory: { name: 'Agent.run, in memory', fn: () => new Agent(ctx, { model }).run('go') },
  session: {
    name: 'Agent.run + session file (2 fsyncs per run)',
    fn: async () => {
      const session = SessionLog.create({ cwd: dir, dir })
      await new Agent(ctx, { model, session }).run('go')
      await session.close(false)
    },
  },
}

bench('one run: a turn with 3 parallel tool calls, then a final answer', async () => {
  await compare('in-process model, loop overhead per run', variants.baseline, [variants.memory], { iterations: 500 })
  await compare('session log cost per run', variants.memory, [variants.session], { iterations: 20, rounds: 9, unit: 'ms' })
}, { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 })
