import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import type { Fiber } from 'cordis'
import { afterEach } from 'vitest'
import { Agent, SessionLog, loadSession, type LoadedSession } from '@cordage/agent'
import { defineTool, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, ScriptedModel, type ScriptStep, type TestContext } from '@cordage/testing'
import type { ChildRunEvent } from '@cordage/services'
import { Subagents, type Config } from '../src/index.js'

const dirs: string[] = []

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A fresh temporary directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'subagent-test-'))
  dirs.push(dir)
  return dir
}

/** A tool that records who called it (`name:agent`) and answers `<name> ok`. */
export function recorder(name: string, calls: string[], delayMs = 0) {
  return defineTool({
    name,
    description: `Records calls of ${name}.`,
    parameters: Schema.object({}),
    concurrency: 'parallel',
    output: { schema: Schema.object({ ok: Schema.boolean().required() }), render: () => [{ type: 'text', text: `${name} ok` }] },
    async execute(_args, exec) {
      calls.push(`${name}:${exec.agent}`)
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs))
      return { ok: true }
    },
  })
}

export interface Setup {
  ctx: TestContext
  dir: string
  parent: Agent
  session: SessionLog
  model: ScriptedModel
  children: ChildRunEvent[]
  fiber: Fiber
}

/**
 * A context with the subagent plugin (sessions in a temp dir), a scripted model and a persisted parent
 * agent named after its session. `before` loads plugins (policy, jobs, tools) first.
 */
export async function setup(
  script: { turns: ScriptStep[]; routes?: Record<string, ScriptStep[]> },
  config: Partial<Config> = {},
  before?: (ctx: TestContext) => Promise<void> | void,
): Promise<Setup> {
  const dir = await tempDir()
  const ctx = await createTestContext()
  await before?.(ctx)
  await ctx.plugin(ScriptedModel, script)
  const fiber = await ctx.plugin(Subagents, { cwd: dir, ...config })
  const children: ChildRunEvent[] = []
  ctx.on('agent/child', (event) => void children.push(event))
  const session = SessionLog.create({ cwd: dir, id: 'parent' })
  const parent = new Agent(ctx, { session })
  return { ctx, dir, parent, session, model: ctx.get('model') as unknown as ScriptedModel, children, fiber }
}

/** The tool results the parent saw for `name`, in order. */
export function toolMessages(agent: Agent, name: string) {
  return agent.messages.filter((message) => message.role === 'tool' && message.name === name) as Array<{
    role: 'tool'
    content: ToolExecutionResult['content']
    isError: boolean
    callId: string
  }>
}

/** The child session files in `dir`, loaded. */
export async function childSessions(dir: string): Promise<LoadedSession[]> {
  const sessions = join(dir, '.cordage', 'sessions')
  const files = (await readdir(sessions)).filter((file) => file !== 'parent.jsonl').sort()
  return files.map((file) => loadSession(join(sessions, file)))
}

/** The text of a tool message. */
export function textOf(message: { content: ToolExecutionResult['content'] } | undefined): string {
  return (message?.content ?? []).map((block) => (block.type === 'text' ? block.text : '')).join('')
}
