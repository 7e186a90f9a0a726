import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { afterEach, expect } from 'vitest'
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api'
import { Agent, SessionLog } from '@cordage/agent'
import { defineTool } from '@cordage/core'
import { createTestContext, ScriptedModel, type TestContext } from '@cordage/testing'
import * as codeMode from '@cordage/plugin-code-mode'
import * as policy from '@cordage/plugin-policy'
import { Subagents } from '@cordage/plugin-subagent'
import otel from '../src/index.js'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './receiver.js'
import { startSdk, type Encoding, type TestSdk } from './sdk.js'

export const SECRET = 'sk-live-4f1c9e7ab2d84c6f'
export const REMOTE_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
export const REMOTE_SPAN = '00f067aa0ba902b7'
const PROGRAM = `
const account = await tools.lookup({})
const echoed = await tools.echo({ text: account.user })
let refused = ''
try { await tools.forbidden({}) } catch (error) { refused = error.message }
return { token: account.token, text: echoed.text, refused }
`

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A tool that returns a secret the policy redacts, and says (in `produced`) that it really returned it. */
function lookupTool(produced: string[]) {
  return defineTool({
    name: 'lookup',
    description: 'Looks the account up.',
    parameters: Schema.object({}),
    output: {
      schema: Schema.object({ user: Schema.string().required(), token: Schema.string().required() }),
      render: (_args, value) => [{ type: 'text', text: `user ${value.user}, token ${value.token}` }],
    },
    execute() {
      produced.push(SECRET)
      return { user: 'ada', token: SECRET }
    },
  })
}

const echoTool = defineTool({
  name: 'echo',
  description: 'Echoes text.',
  parameters: Schema.object({ text: Schema.string().required() }),
  output: { schema: Schema.object({ text: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.text }] },
  execute: (args) => ({ text: args.text }),
})

const forbiddenTool = defineTool({
  name: 'forbidden',
  description: 'Never allowed.',
  parameters: Schema.object({}),
  output: { schema: Schema.object({}), render: () => [{ type: 'text', text: 'ran' }] },
  execute: () => ({}),
})

export interface Scenario {
  receiver: OtlpReceiver
  sdk: TestSdk
  ctx: TestContext
  produced: string[]
  spans: ReceivedSpan[]
}

/**
 * A scripted run through a real SDK to a loopback OTLP endpoint: the parent calls run_code (which calls
 * lookup, echo and a denied tool) and a subagent (which calls lookup); a policy redacts lookup's token.
 * The run starts inside the context a worker would extract from a job's W3C carrier.
 */
export async function runScenario(encoding: Encoding, options: { redact: boolean }): Promise<Scenario> {
  const receiver = await startOtlpReceiver()
  cleanups.push(() => receiver.close())
  const sdk = startSdk(receiver.url, encoding)
  cleanups.push(() => sdk.shutdown())
  const dir = await mkdtemp(join(tmpdir(), 'otel-test-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const ctx = await createTestContext()
  const produced: string[] = []
  ctx.tools.register(lookupTool(produced))
  ctx.tools.register(echoTool)
  ctx.tools.register(forbiddenTool)
  const rules: policy.Config['rules'] = [{ tool: 'forbidden', action: 'deny', reason: 'not here' }]
  if (options.redact) rules.push({ tool: 'lookup', action: 'redact-value', pointers: ['/token'], replacement: '[REDACTED]' })
  await ctx.plugin(policy, { rules })
  await ctx.plugin(codeMode, {})
  const usage = { inputTokens: 1200, outputTokens: 30, cacheReadTokens: 1000, cacheWriteTokens: 0 }
  await ctx.plugin(ScriptedModel, {
    id: 'scripted:test-model',
    turns: [
      { toolCalls: [{ id: 'call_code', name: 'run_code', arguments: { code: PROGRAM } }], usage },
      { toolCalls: [{ id: 'call_sub', name: 'subagent', arguments: { prompt: 'Child: look the account up.' } }], usage },
      { text: 'all done', usage },
    ],
    routes: {
      'Child:': [
        { toolCalls: [{ id: 'call_child', name: 'lookup', arguments: {} }], usage },
        { text: 'child done', usage },
      ],
    },
  })
  await ctx.plugin(Subagents, { persist: false, cwd: dir })
  await ctx.plugin(otel, { captureContent: true })
  const session = SessionLog.create({ cwd: dir, id: 'parent-session' })
  const agent = new Agent(ctx, { session })
  // What a worker does with the carrier its enqueuer put in the job's data.
  const carrier = { traceparent: `00-${REMOTE_TRACE}-${REMOTE_SPAN}-01` }
  const result = await context.with(propagation.extract(ROOT_CONTEXT, carrier), () => agent.run('go'))
  expect(result.stopReason).toBe('completed')
  await session.close({ reason: 'completed' })
  await sdk.flush()
  return { receiver, sdk, ctx, produced, spans: receiver.spans }
}
