import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { contentText } from '@cordage/core'
import { ToolRegistry } from '@cordage/registry'
import { Agent, SessionLog } from '@cordage/agent'
import { ScriptedModel } from '@cordage/testing'
import * as fs from '@cordage/plugin-fs'
import * as codeMode from '@cordage/plugin-code-mode'

// Code Mode end to end: a scripted model answers "who owns the open TODOs?" with one run_code call.
// Its program greps, reads every matching file and aggregates, receiving typed, frozen values from the
// fs tools instead of scraping their rendered text. The agent logs each nested call as
// tool/code-dispatch in the session file.
const workspace = await mkdtemp(join(tmpdir(), 'cordage-code-mode-'))
await mkdir(join(workspace, 'src'))
await writeFile(
  join(workspace, 'src/server.ts'),
  'export function serve() {\n  // TODO(ada): handle SIGTERM\n  return listen()\n}\n// TODO(linus): add metrics\n',
)
await writeFile(join(workspace, 'src/client.ts'), 'export const retries = 3 // TODO(ada): make configurable\n')
await writeFile(join(workspace, 'README.md'), '# demo\n\nNo open items here.\n')

// What the model writes: plain JavaScript against the SDK in run_code's description.
const program = `
const { matches } = await tools.grep({ pattern: 'TODO\\\\(' })
const files = [...new Set(matches.map((match) => match.path))].sort()
const reads = await Promise.all(files.map((path) => tools.read({ path })))
const byOwner = {}
for (const file of reads) {
  for (const line of file.lines) {
    const found = /TODO\\((\\w+)\\): (.*)$/.exec(line.text)
    if (found) (byOwner[found[1]] ??= []).push(file.path + ':' + line.number + ' ' + found[2])
  }
}
console.log('matched ' + matches.length + ' lines in ' + files.length + ' files')
return {
  byOwner,
  typed: {
    lineNumber: typeof matches[0].lineNumber,
    lineNumberOfRead: typeof reads[0].lines[0].number,
    totalLines: typeof reads[0].totalLines,
    frozen: Object.isFrozen(matches) && Object.isFrozen(matches[0]) && Object.isFrozen(reads[0].lines[0]),
  },
}`

const ctx = new Context()
await ctx.plugin(ToolRegistry)
await ctx.plugin(fs, { root: workspace })
await ctx.plugin(codeMode, {})
const model =
  (await ctx.plugin(ScriptedModel, {
    turns: [
      { text: 'I will search and aggregate in one program.', toolCalls: [{ id: 'call_1', name: 'run_code', arguments: { code: program } }] },
      (request) => {
        const result = request.messages.at(-1)!
        const shown = result.role === 'tool' ? contentText(result.content) : ''
        return { text: `Here is what the program found:\n${shown}` }
      },
    ],
  }),
  ctx.get('model') as ScriptedModel)

const session = SessionLog.create({ cwd: workspace })
const agent = new Agent(ctx, { session, system: 'You are a coding agent.' })
const answer = await agent.run('Who owns the open TODOs?')
session.close()

const sdkShown = model.requests[0].tools.find((tool) => tool.name === 'run_code')!.description
console.log('run_code description includes the SDK:', sdkShown.includes('grep: {matches: {path: string, lineNumber: number, line: string'))
console.log(`\nmodel's final answer (${answer.stopReason}):\n${answer.text}`)

const events = (await readFile(session.file, 'utf8'))
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line))
const dispatches = events.filter((event) => event.type === 'tool/code-dispatch')
console.log(`\nsession log: ${dispatches.length} tool/code-dispatch events: ${dispatches.map((event) => `${event.data.index}:${event.data.name}`).join(', ')}`)
const runResult = events.find((event) => event.type === 'tool/result' && event.data.name === 'run_code')
const value = JSON.parse(contentText(runResult.data.content).split('\n').slice(1).join('\n'))

const expected = {
  byOwner: { ada: ['src/client.ts:1 make configurable', 'src/server.ts:2 handle SIGTERM'], linus: ['src/server.ts:5 add metrics'] },
  typed: { lineNumber: 'number', lineNumberOfRead: 'number', totalLines: 'number', frozen: true },
}
const ok = JSON.stringify(value) === JSON.stringify(expected) && dispatches.length === 3 && !JSON.stringify(events).includes('"totalLines"')
console.log(ok ? '\nOK: the program received typed, frozen values and the session log holds only rendered content' : `\nMISMATCH: ${JSON.stringify(value)}`)
await rm(workspace, { recursive: true, force: true })
process.exit(ok ? 0 : 1)
