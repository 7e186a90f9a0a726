import { spawnSync } from 'node:child_process'

/** Runs the project's tests with `node --test`; `summary` is e.g. "5 tests: 2 pass, 3 fail". */
export function runTests(project: string): { ok: boolean; summary: string } {
  const run = spawnSync(process.execPath, ['--test'], { cwd: project, encoding: 'utf8' })
  const count = (name: string) => new RegExp(`^# ${name} (\\d+)$`, 'm').exec(run.stdout)?.[1] ?? '?'
  return { ok: run.status === 0, summary: `${count('tests')} tests: ${count('pass')} pass, ${count('fail')} fail` }
}

interface SessionLine {
  type: string
  data?: {
    name?: string
    isError?: boolean
    callId?: string
    toolCalls?: Array<{ id: string; name: string; arguments: string }>
    content?: unknown
    value?: unknown
  }
}

/** Reads a session log: one line per tool call (name, argument, status), files edited, and whether a value leaked in. */
export function summarizeSession(text: string): { lines: string[]; edited: string[]; valuesLeaked: boolean } {
  const events = text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SessionLine)
  const calls = new Map<string, { name: string; arguments: Record<string, unknown> }>()
  const lines: string[] = []
  const edited: string[] = []
  // Code Mode's nested calls are logged while their run_code call runs, before its result.
  const nested: string[] = []
  let valuesLeaked = false
  for (const event of events) {
    if (event.type === 'assistant/message') {
      for (const call of event.data?.toolCalls ?? []) calls.set(call.id, { name: call.name, arguments: JSON.parse(call.arguments) })
    }
    if (event.type === 'tool/code-dispatch' && event.data) {
      nested.push(`            ↳ ${event.data.isError ? 'failed' : 'ok'} ${event.data.name} (called from run_code)`)
    }
    if (event.type === 'tool/result' && event.data) {
      if ('value' in event.data) valuesLeaked = true
      const call = calls.get(event.data.callId ?? '')
      const target = call
        ? String(call.arguments.command ?? call.arguments.pattern ?? call.arguments.path ?? String(call.arguments.code ?? '').split('\n')[0])
        : ''
      if (call?.name === 'edit' && !event.data.isError) edited.push(target)
      lines.push(`  ${event.data.isError ? 'failed' : 'ok    '}  ${event.data.name} ${target}`, ...nested.splice(0))
    }
  }
  lines.unshift(
    `${lines.filter((line) => !line.includes('↳')).length} tool calls over ${events.filter((event) => event.type === 'assistant/message').length} model turns:`,
  )
  return { lines, edited, valuesLeaked }
}
