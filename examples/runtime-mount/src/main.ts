import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { contentText } from '@cordage/core'
import { ToolRegistry } from '@cordage/registry'
import { Agent, SessionLog } from '@cordage/agent'
import { ScriptedModel, type RecordedRequest } from '@cordage/testing'
import * as cordisTools from '@cordage/plugin-cordis-tools'
import * as codeMode from '@cordage/plugin-code-mode'

// A temporary plugin mounted at runtime: the scripted agent gives itself a `shout` tool with
// cordis_mount, calls it, calls it again from a run_code program, unmounts it, and finds it gone.
// Every request the model receives is recorded, so the tool list and run_code's generated SDK can be
// compared before the mount, while it is mounted and after it is gone.
const workspace = await mkdtemp(join(tmpdir(), 'cordage-runtime-mount-'))

// What the model writes: plain JavaScript returning a plugin; `defineTool` is the mount realm's own.
const plugin = `return {
  name: 'shouting',
  apply(ctx) {
    ctx.tools.register(defineTool({
      name: 'shout',
      description: 'Upper-cases a text and adds an exclamation mark.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      output: {
        schema: { type: 'object', properties: { shouted: { type: 'string' }, length: { type: 'integer' } }, required: ['shouted', 'length'], additionalProperties: false },
        render: (args, value) => [{ type: 'text', text: value.shouted }],
      },
      concurrency: 'parallel',
      execute: async ({ text }) => ({ shouted: text.toUpperCase() + '!', length: text.length + 1 }),
    }))
  },
}`

const program = `
const words = ['mount', 'call', 'unmount']
const results = await Promise.all(words.map((text) => tools.shout({ text })))
return { shouted: results.map((result) => result.shouted), total: results.reduce((sum, result) => sum + result.length, 0) }`

const lastResult = (request: RecordedRequest): string => {
  const message = request.messages.at(-1)!
  return message.role === 'tool' ? contentText(message.content) : ''
}

const ctx = new Context()
await ctx.plugin(ToolRegistry)
const cordisFiber = await ctx.plugin(cordisTools, {})
await ctx.plugin(codeMode, {})
const model =
  (await ctx.plugin(ScriptedModel, {
    turns: [
      { text: 'I will give myself a shout tool.', toolCalls: [{ id: 'call_1', name: 'cordis_mount', arguments: { code: plugin } }] },
      { toolCalls: [{ id: 'call_2', name: 'shout', arguments: { text: 'hello' } }] },
      { toolCalls: [{ id: 'call_3', name: 'run_code', arguments: { code: program } }] },
      { toolCalls: [{ id: 'call_4', name: 'cordis_unmount', arguments: { id: 'dyn-1' } }] },
      { toolCalls: [{ id: 'call_5', name: 'shout', arguments: { text: 'still there?' } }] },
      (request) => ({ text: `After unmounting: ${lastResult(request).split('\n')[0]}` }),
    ],
  }),
  ctx.get('model') as ScriptedModel)

const session = SessionLog.create({ cwd: workspace })
const agent = new Agent(ctx, { session, system: 'You can extend your own runtime.' })
const answer = await agent.run('Give yourself a shout tool, use it, then remove it.')
session.close()

const events = (await readFile(session.file, 'utf8'))
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line))
const results = events
  .filter((event) => event.type === 'tool/result')
  .map((event) => `${event.data.name}: ${contentText(event.data.content).split('\n').join(' | ')}`)
for (const line of results) console.log(`result ${line}`)
const runResult = events.find((event) => event.type === 'tool/result' && event.data.name === 'run_code')
const programValue = JSON.parse(contentText(runResult.data.content))
const dispatches = events
  .filter((event) => event.type === 'tool/code-dispatch')
  .map((event) => event.data.name)
  .join(', ')
console.log(`run_code dispatched: ${dispatches}`)

// requests[0]: before the mount; [1]–[3]: mounted; [4] onwards: unmounted.
const names = (request: RecordedRequest) =>
  request.tools
    .map((tool) => tool.name)
    .sort()
    .join(', ')
const sdk = (request: RecordedRequest) => request.tools.find((tool) => tool.name === 'run_code')!.description
const [before, mounted, , , after] = model.requests
console.log(`tools before: ${names(before)}`)
console.log(`tools mounted: ${names(mounted)}`)
console.log(`tools after: ${names(after)}`)
const shoutInSdk = (request: RecordedRequest) => sdk(request).includes('\nshout: ')
console.log(`run_code SDK names shout: before ${shoutInSdk(before)}, mounted ${shoutInSdk(mounted)}, after ${shoutInSdk(after)}`)
console.log(`run_code SDK after unmount equals the one before mount: ${sdk(after) === sdk(before)}`)
console.log(`\nmodel's final answer (${answer.stopReason}): ${answer.text}`)

const ok =
  names(before) === names(after) &&
  names(mounted) === `${names(before)}, shout`.split(', ').sort().join(', ') &&
  !shoutInSdk(before) &&
  shoutInSdk(mounted) &&
  sdk(after) === sdk(before) &&
  JSON.stringify(programValue) === JSON.stringify({ shouted: ['MOUNT!', 'CALL!', 'UNMOUNT!'], total: 19 }) &&
  dispatches === 'shout, shout, shout' &&
  ctx.get('tools')!.get('shout') === undefined
console.log(ok ? '\nOK: the tool list and the run_code SDK changed with the mount and came back after the unmount' : '\nMISMATCH')
// Unloading cordis-tools would also dispose every mount still standing.
await cordisFiber.dispose()
await rm(workspace, { recursive: true, force: true })
process.exit(ok ? 0 : 1)
