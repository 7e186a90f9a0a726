import { afterEach, describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type ElicitRequestFormParams, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { defineTool } from '@cordage/core'
import * as Interaction from '@cordage/plugin-interaction'
import * as Policy from '@cordage/plugin-policy'
import { createTestContext } from '@cordage/testing'
import { serve } from '../src/serve.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const echo = defineTool({
  name: 'echo',
  description: 'Repeats text.',
  parameters: Schema.object({ text: Schema.string().required() }),
  output: { schema: Schema.object({ said: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: `echo: ${value.said}` }] },
  execute: (args) => ({ said: args.text }),
})

/** A context with interaction (plan mode on), a policy asking before `echo`, served over loopback HTTP. */
async function start(options: { elicitation?: boolean } = {}) {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(Interaction, { planMode: true, writeTools: ['never'] })
  await ctx.plugin(Policy, { rules: [{ tool: 'echo', action: 'ask', reason: 'echo is loud' }] })
  await ctx.plugin({ name: 'echo', inject: ['tools'], apply: (inner: Context) => void inner.tools.register(echo) })
  let url = ''
  const fiber = await ctx.plugin({
    name: 'serve',
    inject: ['tools'],
    async apply(inner: Context) {
      url = (await serve(inner, { transport: 'http', port: 0, ...options })).url!
    },
  })
  cleanups.push(() => fiber.dispose())
  return { ctx, fiber, url }
}

/** A real SDK client; with `answer`, it declares elicitation and answers each request with it. */
async function connect(url: string, answer?: (params: ElicitRequestFormParams) => ElicitResult, capability: object = { form: {} }) {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, answer ? { capabilities: { elicitation: capability as Record<string, never> } } : {})
  const asked: ElicitRequestFormParams[] = []
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params as ElicitRequestFormParams)
      return answer(request.params as ElicitRequestFormParams)
    })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  cleanups.push(() => client.close())
  return { client, asked }
}

const questions = {
  questions: [
    { id: 'db', question: 'Which database?', options: [{ label: 'Postgres', description: 'relational' }, { label: 'SQLite' }] },
    { id: 'features', question: 'Which features?', multiSelect: true, options: [{ label: 'A' }, { label: 'B' }] },
  ],
}

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ text: string }>)[0]!.text
}

describe('MCP elicitation as the human side', () => {
  it('ask_user_question becomes one form on the calling client', async () => {
    const { url } = await start()
    const { client, asked } = await connect(url, () => ({ action: 'accept', content: { q0: 'SQLite', q1: ['A', 'B'], q1_custom: 'and C' } }))
    const result = await client.callTool({ name: 'ask_user_question', arguments: questions })
    expect(result.structuredContent).toEqual({
      answers: [
        { id: 'db', selected: ['SQLite'] },
        { id: 'features', selected: ['A', 'B'], custom: 'and C' },
      ],
    })
    expect(asked[0]!.requestedSchema.properties).toEqual({
      q0: {
        type: 'string',
        title: 'Which database?',
        oneOf: [
          { const: 'Postgres', title: 'Postgres: relational' },
          { const: 'SQLite', title: 'SQLite' },
        ],
      },
      q0_custom: { type: 'string', title: 'Or your own answer' },
      q1: {
        type: 'array',
        title: 'Which features?',
        items: {
          anyOf: [
            { const: 'A', title: 'A' },
            { const: 'B', title: 'B' },
          ],
        },
      },
      q1_custom: { type: 'string', title: 'Or your own answer' },
    })
  })

  it('a client that declares an empty elicitation capability (form mode by default) is asked too', async () => {
    const { url } = await start()
    const { client } = await connect(url, () => ({ action: 'accept', content: { q0: 'Postgres' } }), {})
    const result = await client.callTool({ name: 'ask_user_question', arguments: { questions: [questions.questions[0]] } })
    expect(result.structuredContent).toEqual({ answers: [{ id: 'db', selected: ['Postgres'] }] })
  })

  it('a question left blank in an accepted form fails with INTERACTION_DECLINED', async () => {
    const { url } = await start()
    const { client } = await connect(url, () => ({ action: 'accept', content: { q0: 'SQLite' } }))
    const result = await client.callTool({ name: 'ask_user_question', arguments: questions })
    expect(text(result)).toBe('Error: the user left "Which features?" unanswered; carry on with your best judgement and say what you assumed')
  })

  it('a declined question fails with INTERACTION_DECLINED', async () => {
    const { url } = await start()
    const { client } = await connect(url, () => ({ action: 'decline' }))
    const result = await client.callTool({ name: 'ask_user_question', arguments: questions })
    expect(result.isError).toBe(true)
    expect(text(result)).toBe('Error: the user declined the questions; carry on with your best judgement and say what you assumed')
  })

  it('policy ask becomes an allow/deny elicitation naming the call', async () => {
    const { url } = await start()
    const decisions = ['allow', 'deny']
    const { client, asked } = await connect(url, () => ({ action: 'accept', content: { decision: decisions.shift()! } }))
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'one' } }))).toBe('echo: one')
    const denied = await client.callTool({ name: 'echo', arguments: { text: 'two' } })
    expect(denied.isError).toBe(true)
    expect(text(denied)).toBe('Error: the user did not approve this call (echo is loud)')
    expect(asked.map((params) => params.message)).toEqual([
      'Allow the tool call "echo" (echo is loud)?\n\nArguments: {"text":"one"}',
      'Allow the tool call "echo" (echo is loud)?\n\nArguments: {"text":"two"}',
    ])
  })

  it('exit_plan_mode shows the plan and returns the feedback, then approves', async () => {
    const { ctx, url } = await start()
    const reviews: ElicitResult[] = [
      { action: 'accept', content: { decision: 'keep', feedback: 'add tests' } },
      { action: 'accept', content: { decision: 'approve' } },
    ]
    const { client, asked } = await connect(url, () => reviews.shift()!)
    const kept = await client.callTool({ name: 'exit_plan_mode', arguments: { plan: '# Plan\n1. fix' } })
    expect(text(kept)).toBe('Error: The user chose to keep planning; their feedback: add tests')
    const approved = await client.callTool({ name: 'exit_plan_mode', arguments: { plan: '# Plan\n1. test\n2. fix' } })
    expect(approved.structuredContent).toEqual({ approved: true })
    expect(asked[1]!.message).toBe('Approve this plan and leave plan mode?\n\n# Plan\n1. test\n2. fix')
    expect(ctx.get('planMode')!.active).toBe(false)
  })

  it('a client without elicitation gets INTERACTION_UNAVAILABLE and APPROVAL_UNAVAILABLE, never a hang', async () => {
    const { url } = await start()
    const { client } = await connect(url)
    const ask = await client.callTool({ name: 'ask_user_question', arguments: questions })
    expect(ask.isError).toBe(true)
    expect(text(ask)).toMatch(/^Error: ask_user_question: the MCP client does not support elicitation/)
    const call = await client.callTool({ name: 'echo', arguments: { text: 'x' } })
    expect(call.isError).toBe(true)
    expect(text(call)).toContain('APPROVAL_UNAVAILABLE: "echo" needs approval (echo is loud), but the MCP client does not support elicitation')
  })

  it('asks the client that made the call, not another connected one', async () => {
    const { url } = await start()
    const first = await connect(url, () => ({ action: 'accept', content: { q0: 'Postgres' } }))
    const second = await connect(url, () => ({ action: 'accept', content: { q0: 'SQLite' } }))
    const args = { questions: [questions.questions[0]] }
    expect((await second.client.callTool({ name: 'ask_user_question', arguments: args })).structuredContent).toEqual({
      answers: [{ id: 'db', selected: ['SQLite'] }],
    })
    expect(first.asked).toEqual([])
  })

  it('in-process calls (no MCP caller) are not elicited; unloading removes the services', async () => {
    const { ctx, fiber } = await start()
    const local = await ctx.tools.execute({ name: 'ask_user_question', arguments: { questions: [questions.questions[0]] } })
    expect(local.isError && local.error.info?.code).toBe('INTERACTION_UNAVAILABLE')
    await fiber.dispose()
    expect(ctx.get('interaction')).toBeUndefined()
    expect(ctx.get('approval')).toBeUndefined()
  })

  it('elicitation: false provides neither service', async () => {
    const { ctx } = await start({ elicitation: false })
    expect(ctx.get('interaction')).toBeUndefined()
    expect(ctx.get('approval')).toBeUndefined()
  })
})
