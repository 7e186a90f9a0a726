import type { Context } from 'cordis'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import type { Answer, InteractionService, PlanReview, Question } from '@cordage/services'

/** A scripted human: answers come from queues; every request is recorded. */
export class FakeHuman implements InteractionService {
  readonly asked: Question[][] = []
  readonly plans: string[] = []
  answers: Array<Answer[] | ((questions: readonly Question[], signal: AbortSignal) => Promise<Answer[]>)> = []
  reviews: PlanReview[] = []

  async ask(questions: readonly Question[], signal: AbortSignal): Promise<Answer[]> {
    this.asked.push([...questions])
    const next = this.answers.shift()
    if (!next) throw new Error('FakeHuman: no answer scripted')
    return typeof next === 'function' ? next(questions, signal) : next
  }

  async approvePlan(plan: string): Promise<PlanReview> {
    this.plans.push(plan)
    return this.reviews.shift() ?? { approved: false }
  }
}

/** A plugin that provides `human` as `ctx.interaction`. */
export function humanPlugin(human: FakeHuman) {
  return { name: 'fake-human', apply: (ctx: Context) => void ctx.provide('interaction', human) }
}

const Path = Schema.object({ path: Schema.string().required() })
const Done = Schema.object({ ok: Schema.boolean().required() })

/** Test tools: one that declares a write path, one a read path, and names plan mode lists. */
export function testTools(ran: string[]) {
  const tool = (name: string, access?: 'read' | 'write') =>
    defineTool({
      name,
      description: `test tool ${name}`,
      parameters: Path,
      output: { schema: Done, render: () => [{ type: 'text', text: 'done' }] },
      ...(access && { paths: [{ pointer: '/path', access }] }),
      execute: () => {
        ran.push(name)
        return { ok: true }
      },
    })
  return {
    name: 'test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      for (const definition of [
        tool('write_file', 'write'),
        tool('read_file', 'read'),
        tool('bash'),
        tool('terminal_open'),
        tool('cordis_mount'),
        tool('lookup'),
      ])
        ctx.tools.register(definition)
    },
  }
}
