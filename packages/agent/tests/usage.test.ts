import { expect, it } from 'vitest'
import type { AgentUsageEvent } from '@cordage/services'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, costOf, formatCost, formatUsage } from '../src/index.js'

const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
const usage = (input: number, output: number, read = 0, write = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: read,
  cacheWriteTokens: write,
  reasoningTokens: 0,
})

it('totals every usage field over a run, prices it, and reports each request on agent/usage for run budgets', async () => {
  const ctx = await createTestContext({ print: false })
  const model = new ScriptedModel(ctx, {
    price,
    turns: [
      { toolCalls: [{ name: 'missing' }], usage: usage(1000, 50, 0, 800) },
      { text: 'done', usage: usage(1200, 20, 800, 300) },
    ],
  })
  const seen: AgentUsageEvent[] = []
  ctx.on('agent/usage', (event) => void seen.push(event))
  const result = await new Agent(ctx, { model, agent: 'root' }).run('go')
  expect(result.usage).toEqual({ inputTokens: 2200, outputTokens: 70, cacheReadTokens: 800, cacheWriteTokens: 1100, reasoningTokens: 0 })
  // Uncached input at input price, cache reads and writes at theirs, output at output price.
  expect(result.cost).toBeCloseTo((200 * 3 + 800 * 3.75 + 50 * 15 + 100 * 3 + 800 * 0.3 + 300 * 3.75 + 20 * 15) / 1e6, 12)
  expect(seen).toEqual([
    { agent: 'root', model: 'scripted', purpose: 'turn', usage: usage(1000, 50, 0, 800), cost: costOf(usage(1000, 50, 0, 800), price) },
    { agent: 'root', model: 'scripted', purpose: 'turn', usage: usage(1200, 20, 800, 300), cost: costOf(usage(1200, 20, 800, 300), price) },
  ])
  expect(formatUsage(result.usage)).toBe('2,200 in (800 cached, 1,100 written) · 70 out')
  expect(formatCost(result.cost)).toBe('$0.0063')
})

it('an unknown price or a turn without usage makes the cost unknown, never 0', async () => {
  const ctx = await createTestContext({ print: false })
  const unpriced = new ScriptedModel(ctx, { turns: [{ text: 'a', usage: usage(10, 1) }] })
  const first = await new Agent(ctx, { model: unpriced }).run('x')
  expect(first.cost).toBeUndefined()
  expect(formatCost(first.cost)).toBe('unknown price')
  const other = await createTestContext({ print: false })
  const partly = new ScriptedModel(other, { price, turns: [{ toolCalls: [{ name: 'missing' }], usage: usage(10, 1) }, { text: 'b' }] })
  expect((await new Agent(other, { model: partly }).run('y')).cost).toBeUndefined()
})
