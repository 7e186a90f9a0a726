import type { Fiber } from 'cordis'
import { afterEach, expect } from 'vitest'
import { contentText, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, type TestContext } from '@cordage/testing'
import * as codeMode from '@cordage/plugin-code-mode'
import * as cordisTools from '../src/index.js'

// Code Mode keeps worker threads: unload every context's plugins after each test.
const loaded: Fiber[] = []
afterEach(async () => {
  await Promise.all(
    loaded
      .splice(0)
      .reverse()
      .map((fiber) => fiber.dispose()),
  )
})

export interface Setup {
  ctx: TestContext
  /** The cordis-tools fiber. */
  fiber: Fiber
  /** The code-mode fiber, whose workers run mounted code. */
  codeModeFiber: Fiber
  call(name: string, args: Record<string, unknown>): Promise<ToolExecutionResult>
  /** The value of a call that must succeed. */
  value(name: string, args: Record<string, unknown>): Promise<any>
}

/** A context with code-mode (one warm worker) and cordis-tools loaded; `before` loads plugins first. */
export async function setup(config: Partial<cordisTools.Config> = {}, before?: (ctx: TestContext) => Promise<void> | void): Promise<Setup> {
  const ctx = await createTestContext({ print: false })
  await before?.(ctx)
  const codeModeFiber = await ctx.plugin(codeMode, { poolSize: 1 })
  loaded.push(codeModeFiber)
  const fiber = await ctx.plugin(cordisTools, config)
  loaded.push(fiber)
  const call = (name: string, args: Record<string, unknown>) => ctx.tools.execute({ name, arguments: args })
  const value = async (name: string, args: Record<string, unknown>) => {
    const result = await call(name, args)
    if (result.isError) throw new Error(contentText(result.content))
    return result.value as any
  }
  return { ctx, fiber, codeModeFiber, call, value }
}

/** The code and text of a call that must fail. */
export function failure(result: ToolExecutionResult): { code?: string; text: string } {
  expect(result.isError, contentText(result.content)).toBe(true)
  return { code: result.isError ? result.error.info?.code : undefined, text: contentText(result.content) }
}

/** A mount whose one tool `probe_result` runs `body` and returns what it returns (as JSON). */
export function probeCode(body: string): string {
  return `return { name: 'probe', apply(ctx) { ctx.tools.register(defineTool({ name: 'probe_result', description: 'p', output: { schema: {}, render: (a, v) => [{ type: 'text', text: JSON.stringify(v) }] }, execute: async () => { ${body} } })) } }`
}
