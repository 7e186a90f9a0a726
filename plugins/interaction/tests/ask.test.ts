import { describe, expect, it } from 'vitest'
import { contentText, type JsonValue } from '@cordage/core'
import { createTestContext, testToolContract } from '@cordage/testing'
import * as Interaction from '../src/index.js'
import { FakeHuman, humanPlugin } from './helpers.js'

const q1: { id: string; question: string; options: Array<{ label: string; description?: string }> } = {
  id: 'q1',
  question: 'Which database?',
  options: [{ label: 'Postgres', description: 'relational' }, { label: 'SQLite' }],
}
const q2 = { id: 'q2', question: 'Which features?', options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }], multiSelect: true }

const contractHuman = new FakeHuman()
contractHuman.answers = Array.from({ length: 20 }, () => [{ id: 'q1', selected: ['Postgres'] }])
testToolContract(Interaction, {
  before: [humanPlugin(contractHuman)],
  cases: [
    { tool: 'ask_user_question', arguments: { questions: [q1] } as JsonValue },
    { tool: 'ask_user_question', arguments: { questions: [] }, expect: 'error' },
    { tool: 'exit_plan_mode', arguments: { plan: '# Plan\n1. do it' }, expect: 'error' },
  ],
})

async function setup(withHuman = true) {
  const ctx = await createTestContext({ print: false })
  const human = new FakeHuman()
  if (withHuman) await ctx.plugin(humanPlugin(human))
  const fiber = await ctx.plugin(Interaction, {})
  const ask = (questions: unknown[], signal?: AbortSignal) =>
    ctx.tools.execute({ name: 'ask_user_question', arguments: { questions }, ...(signal && { signal }) })
  return { ctx, fiber, human, ask }
}

describe('ask_user_question', () => {
  it('asks through ctx.interaction and returns the answers as compact JSON', async () => {
    const { human, ask } = await setup()
    human.answers.push([{ id: 'q1', selected: ['Postgres'] }])
    const result = await ask([q1])
    expect(human.asked).toEqual([[q1]])
    expect(!result.isError && result.value).toEqual({ answers: [{ id: 'q1', selected: ['Postgres'] }] })
    expect(contentText(result.content)).toBe('{"answers":[{"id":"q1","selected":["Postgres"]}]}')
  })

  it('returns several selections and free text, in question order', async () => {
    const { human, ask } = await setup()
    human.answers.push([
      { id: 'q2', selected: ['A', 'C'], custom: '  and D ' },
      { id: 'q1', selected: [], custom: 'MySQL' },
    ])
    const result = await ask([q1, q2])
    expect(contentText(result.content)).toBe('{"answers":[{"id":"q1","selected":[],"custom":"MySQL"},{"id":"q2","selected":["A","C"],"custom":"and D"}]}')
  })

  it.each([
    ['no questions', [], 'ask_user_question requires at least one question'],
    ['a repeated id', [q1, { ...q2, id: 'q1' }], 'duplicate question id "q1"; give each question its own id'],
    ['a repeated option', [{ ...q1, options: [{ label: 'X' }, { label: 'X' }] }], 'question "q1" repeats the option "X"'],
  ])('refuses %s before asking anyone', async (_title, questions, message) => {
    const { human, ask } = await setup()
    const result = await ask(questions)
    expect(result.isError && result.error).toMatchObject({ message, info: { code: 'INVALID_QUESTIONS' } })
    expect(human.asked).toEqual([])
  })

  it.each([
    ['an unknown label', [{ id: 'q1', selected: ['Oracle'] }], '"Oracle" is not an option of question "q1"'],
    ['a missing answer', [], 'no answer for question "q1"'],
    ['two labels for a single choice', [{ id: 'q1', selected: ['Postgres', 'SQLite'] }], 'question "q1" takes one option, got 2'],
    ['an empty answer', [{ id: 'q1', selected: [], custom: ' ' }], 'the answer to "q1" is empty'],
  ])('fails when the service returns %s', async (_title, answers, message) => {
    const { human, ask } = await setup()
    human.answers.push(answers)
    const result = await ask([q1])
    expect(result.isError && result.error.info?.code).toBe('INVALID_ANSWERS')
    expect(result.isError && result.error.message).toContain(message)
  })

  it('fails with INTERACTION_UNAVAILABLE when nobody can be asked', async () => {
    const { ask } = await setup(false)
    const result = await ask([q1])
    expect(result.isError && result.error.info?.code).toBe('INTERACTION_UNAVAILABLE')
    expect(contentText(result.content)).toMatch(/^Error: ask_user_question: no user can be asked here/)
  })

  it('passes the call signal to the service: cancelling the call stops the question', async () => {
    const { human, ask } = await setup()
    let sawAbort = false
    let asked!: () => void
    const asking = new Promise<void>((resolve) => (asked = resolve))
    human.answers.push(
      (_questions, signal) =>
        new Promise((_resolve, reject) => {
          asked()
          signal.addEventListener('abort', () => {
            sawAbort = true
            reject(signal.reason)
          })
        }),
    )
    const controller = new AbortController()
    const pending = ask([q1], controller.signal)
    await asking
    controller.abort()
    const result = await pending
    expect(sawAbort).toBe(true)
    expect(result.isError && result.error.info?.code).toBe('ABORTED')
  })

  it('unloading removes both tools and the planMode service', async () => {
    const { ctx, fiber } = await setup()
    expect(ctx.get('planMode')).toBeDefined()
    await fiber.dispose()
    expect(ctx.tools.get('ask_user_question')).toBeUndefined()
    expect(ctx.tools.get('exit_plan_mode')).toBeUndefined()
    expect(ctx.get('planMode')).toBeUndefined()
  })
})
