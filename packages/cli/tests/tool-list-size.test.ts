import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { cordage, project } from './helpers.js'

// Budgets of issue #31: what the default preset's tool list costs every model request.
const RUN_CODE_BUDGET = 6_000
const LIST_BUDGET = 14_000

let openai: FakeOpenAIServer
beforeAll(async () => {
  openai = await startFakeOpenAI([{ text: 'done' }], { loop: true })
})
afterAll(() => openai.close())

describe('the tool list of the default preset', { timeout: 90_000 }, () => {
  it(`costs at most ${LIST_BUDGET} bytes per request, run_code at most ${RUN_CODE_BUDGET}, as the OpenAI request carries it`, async () => {
    const dir = project()
    const result = await cordage(['run', '--base-url', openai.baseURL, '--no-key', '--model', 'local', 'hi'], { cwd: dir })
    expect(result.code, result.stderr).toBe(0)
    const tools: Array<{ function: { name: string } }> = openai.requests.at(-1)!.body.tools
    const sizes = tools.map((tool) => [tool.function.name, Buffer.byteLength(JSON.stringify(tool))] as const)
    const total = Buffer.byteLength(JSON.stringify(tools))
    const runCode = sizes.find(([name]) => name === 'run_code')?.[1]
    console.log(
      [
        `tool list of the default preset: ${tools.length} tools, ${total} bytes (budget ${LIST_BUDGET}); run_code ${runCode} bytes (budget ${RUN_CODE_BUDGET})`,
        ...sizes.map(([name, bytes]) => `  ${name.padEnd(20)} ${String(bytes).padStart(6)}`),
      ].join('\n'),
    )
    expect(runCode, 'run_code is offered').toBeGreaterThan(0)
    expect(runCode).toBeLessThanOrEqual(RUN_CODE_BUDGET)
    expect(total).toBeLessThanOrEqual(LIST_BUDGET)
  })
})
