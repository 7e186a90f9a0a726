import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { ToolRegistry } from '@cordage/registry'
import { Agent, SessionLog, childSessionFiles, deriveMessages, loadSession } from '@cordage/agent'
import { ScriptedModel } from '@cordage/testing'
import * as fs from '@cordage/plugin-fs'
import * as codeMode from '@cordage/plugin-code-mode'
import { Subagents } from '@cordage/plugin-subagent'
import * as workflow from '@cordage/plugin-workflow'
import { cordageBin } from './paths.js'
import { writeRepository } from './repository.js'
import { AREAS, script } from './script.js'

// A research team: the lead writes one workflow program that fans out three subagents (one per area of
// a small repository) with Promise.all. Each subagent may only glob and grep, and must end with a
// structured summary that its schema validates; the lead merges the three into one report. Every child
// has its own session file, linked to the workflow call, and `cordage replay` nests them under it.
const workspace = await mkdtemp(join(tmpdir(), 'cordage-research-team-'))
await writeRepository(workspace)

const ctx = new Context()
const fibers = [
  await ctx.plugin(ToolRegistry),
  await ctx.plugin(fs, { root: workspace }),
  await ctx.plugin(codeMode, {}),
  await ctx.plugin(Subagents, { cwd: workspace, maxConcurrent: 3 }),
  await ctx.plugin(workflow, {}),
  await ctx.plugin(ScriptedModel, script()),
]
const model = ctx.get('model') as ScriptedModel
ctx.on('agent/child', (event) =>
  console.log(`  ${event.type === 'start' ? '┌' : '└'} ${event.label}${event.type === 'end' ? ` ${event.stopReason} (${event.durationMs} ms)` : ''}`),
)

const session = SessionLog.create({ cwd: workspace, id: 'lead' })
const agent = new Agent(ctx, { session, system: 'You lead a small research team.' })
console.log('== the run')
const answer = await agent.run('Survey this repository: what is unfinished in each area?')
await session.close()
console.log(`\n== the lead's answer (${answer.stopReason})\n${answer.text}`)

// Each child session is linked to the workflow call and replays exactly what its model was sent.
const children = childSessionFiles(session.file, 'lead').get('call_workflow') ?? []
let exact = 0
for (const file of children) {
  const child = loadSession(file)
  const prompt = child.events.find((event) => event.type === 'user/message')?.data
  const requests = model.requests.filter(
    (request) => request.messages.find((message) => message.role === 'user')?.content === (prompt as { content: string }).content,
  )
  const last = requests.at(-1)!
  const replayed = deriveMessages(child.events)
  if (JSON.stringify(replayed.slice(0, last.messages.length)) === JSON.stringify(last.messages)) exact++
}
console.log(`\n== sessions: ${children.length} child sessions linked to call_workflow; ${exact} replay exactly what their model saw`)

const replay = spawnSync(process.execPath, [cordageBin(), 'replay', session.file], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
const nested = replay.stdout.split('\n').filter((line) => line.includes('┌ child run')).length
console.log(`cordage replay nests ${nested} child runs under the workflow call`)

for (const fiber of fibers.reverse()) await fiber.dispose()
await rm(workspace, { recursive: true, force: true })
const ok =
  answer.stopReason === 'completed' &&
  children.length === AREAS.length &&
  exact === AREAS.length &&
  nested === AREAS.length &&
  answer.text.includes('auth: rate-limit failed attempts') &&
  answer.text.includes('billing: currency rounding') &&
  answer.text.includes('5 files surveyed')
console.log(ok ? '\nOK: three researchers reported validated summaries and the lead merged them' : '\nFAILED: the team did not produce the expected report')
process.exit(ok ? 0 : 1)
