import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, SessionLog, deriveMessages, loadSession } from '../src/index.js'
import { tempDir } from './helpers.js'

const child = fileURLToPath(new URL('./fixtures/compact-child.mjs', import.meta.url))

it('kill -9 during a compaction, then resume: every committed event is still there and the resumed run compacts and goes on', async () => {
  const cwd = await tempDir()
  const process_ = spawn(process.execPath, [child, cwd, 'killed', '3000'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  process_.stderr.on('data', (chunk) => (stderr += chunk))
  // Hang detector only: the child reaches its first compaction within a few turns.
  const seen = await new Promise<{ compacting: number; events: number }>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`the child never started compacting: ${stderr}`)), 60_000)
    process_.stdout.on('data', (chunk) => {
      out += chunk
      const line = out.split('\n').find((candidate) => candidate.startsWith('{'))
      if (!line) return
      clearTimeout(timer)
      resolve(JSON.parse(line))
    })
    process_.on('exit', (code) => reject(new Error(`the child exited (${code}) before compacting: ${stderr}`)))
  })
  process_.kill('SIGKILL')
  await new Promise((resolve) => process_.once('exit', resolve))

  const file = `${cwd}/.cordage/sessions/killed.jsonl`
  const loaded = loadSession(file)
  // Nothing committed was lost, and no half-written compaction is there.
  expect(loaded.events.length).toBeGreaterThanOrEqual(seen.events)
  expect(loaded.events.some((event) => event.type === 'session/compact')).toBe(false)
  const before = deriveMessages(loaded.events)
  expect(before.length).toBe(seen.compacting)

  const ctx = await createTestContext({ print: false })
  ctx.tools.register({
    name: 'read_file',
    description: 'Reads a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    output: { schema: { type: 'object' }, render: () => [{ type: 'text', text: 'ok' }] },
    execute: () => ({}),
  })
  const model = new ScriptedModel(ctx, { turns: [{ text: 'Resumed and done.' }], contextWindow: 3000, summarize: () => ({ text: 'Read f0 onwards.' }) })
  const session = SessionLog.open(file)
  const agent = new Agent(ctx, { model, session })
  const result = await agent.run()
  await session.close()
  expect(result).toMatchObject({ stopReason: 'completed', text: 'Resumed and done.' })
  const after = loadSession(file).events
  // The file still starts with every event the killed run committed, byte for byte.
  expect(after.slice(0, loaded.events.length)).toEqual(loaded.events)
  expect(after.filter((event) => event.type === 'session/compact')).toHaveLength(1)
  expect(agent.messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining('Read f0 onwards.') })
  expect(JSON.stringify(deriveMessages(after))).toBe(JSON.stringify(agent.messages))
}, 120_000)
