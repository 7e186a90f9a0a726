import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { contentText, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, ScriptedModel, type ScriptStep, type TestContext } from '@cordage/testing'
import { Subagents } from '@cordage/plugin-subagent'
import * as Shell from '@cordage/plugin-shell'
import * as Workflow from '../src/index.js'

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

const report = (status: string, summary: string): ScriptStep => ({ toolCalls: [{ name: 'structured_output', arguments: { status, summary } }] })

async function setup(rounds: ScriptStep[], withShell = false): Promise<{ ctx: TestContext; model: ScriptedModel; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ralph-test-'))
  dirs.push(dir)
  const ctx = await createTestContext()
  await ctx.plugin(ScriptedModel, { turns: [], routes: { 'Fix the build.': rounds } })
  await ctx.plugin(Subagents, { persist: false })
  if (withShell) await ctx.plugin(Shell, { root: dir })
  await ctx.plugin(Workflow, { maxRounds: 5 })
  return { ctx, model: ctx.get('model') as unknown as ScriptedModel, dir }
}

function call(ctx: TestContext, args: Record<string, unknown>): Promise<ToolExecutionResult> {
  return ctx.tools.execute({ name: 'ralph', arguments: args })
}

describe('ralph', () => {
  it('stops when a round reports done', async () => {
    const { ctx } = await setup([report('done', 'all green')])
    const result = await call(ctx, { prompt: 'Fix the build.', maxRounds: 3 })
    expect(result).toMatchObject({
      isError: false,
      value: { agentsStarted: 1, result: { status: 'done', rounds: 1, report: { status: 'done', summary: 'all green' } } },
    })
    expect(contentText(result.content)).toMatch(/^ralph: the worker reported the task done after 1 round\.\nFinal report:\n/)
  })

  it('hands each round the previous summary and stops at maxRounds', async () => {
    const { ctx, model } = await setup([report('continue', 'did step 1'), report('continue', 'did step 2'), report('continue', 'did step 3')])
    const result = await call(ctx, { prompt: 'Fix the build.', maxRounds: 3 })
    expect(result).toMatchObject({ isError: false, value: { agentsStarted: 3, result: { status: 'max-rounds', rounds: 3 } } })
    const prompts = model.requests.map((request) => request.messages.find((message) => message.role === 'user')!.content)
    expect(prompts[0]).toContain('Round 1 of at most 3. You start fresh')
    expect(prompts[0]).toContain('This is the first round.')
    expect(prompts[1]).toContain('The previous round reported (continue):\ndid step 1')
    expect(prompts[2]).toContain('did step 2')
    expect(contentText(result.content)).toContain('reached its limit of 3 rounds')
  })

  it('stops when the until command exits 0, running it through bash', async () => {
    const { ctx, dir } = await setup([report('continue', 'a'), report('continue', 'b'), report('continue', 'c')], true)
    const until = `n=$(cat ${dir}/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${dir}/n; [ $n -ge 2 ]`
    const result = await call(ctx, { prompt: 'Fix the build.', maxRounds: 5, until })
    expect(result).toMatchObject({ isError: false, value: { agentsStarted: 2, result: { status: 'until-passed', rounds: 2 } } })
  })

  it('fails a round that ends without a report, naming the round and the last report', async () => {
    const { ctx } = await setup([report('continue', 'half done'), { text: 'no report' }, { text: 'still none' }])
    const result = await call(ctx, { prompt: 'Fix the build.', maxRounds: 4 })
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'RALPH_ROUND_FAILED' } } })
    expect(result.isError && result.error.message).toMatch(
      /^ralph round 2 failed: the subagent finished without calling structured_output.*the last report was: \{"status":"continue","summary":"half done"\}$/s,
    )
  })

  it('refuses maxRounds above the configured ceiling before running anything', async () => {
    const { ctx, model } = await setup([])
    const result = await call(ctx, { prompt: 'Fix the build.', maxRounds: 6 })
    expect(result).toMatchObject({ isError: true, error: { message: 'maxRounds 6 exceeds the configured ceiling 5' } })
    expect(model.requests).toEqual([])
  })
})
