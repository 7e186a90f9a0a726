import { readFileSync } from 'node:fs'
import { ToolAbortedBeforeDispatchError, errorMessage } from '@cordage/core'
import { SessionError } from './errors.js'
import type { SessionEvent, SessionEventMap, SessionHeader } from './session-types.js'

/** A parsed session file: header, events (repairs included) and what was tolerated on the way. */
export interface LoadedSession {
  file: string
  header: SessionHeader
  events: SessionEvent[]
  /** Human-readable notes: a dropped torn line, synthesised results. */
  warnings: string[]
  /** Byte length of the intact prefix (every complete line); a torn tail starts here. */
  intactBytes: number
  /** True when the intact prefix does not end with a newline (a complete last line missing its `\n`). */
  missingNewline: boolean
  /** The synthetic events added by repair (already included in `events`, not yet in the file). */
  repairs: SessionEvent[]
}

const EVENT_TYPES = new Set<string>([
  'system/message',
  'user/message',
  'assistant/message',
  'tool/result',
  'tool/code-dispatch',
  'run/end',
  'session/compact',
  'session/end',
  'session/waiting',
  'session/answer',
  'session/resumed',
])

/**
 * Reads a session file. A torn last line (a crash mid-append) is dropped with a warning; any other
 * malformed line throws `SessionError` (code `SESSION_CORRUPT`) naming the line. Tool calls of the last
 * model turn that have no result get a synthetic `ABORTED_BEFORE_DISPATCH` result, so the conversation
 * is valid to send again.
 */
export function loadSession(file: string): LoadedSession {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (error) {
    throw new SessionError('SESSION_NOT_FOUND', `cannot read session file ${file}: ${errorMessage(error)}`, { cause: error })
  }
  const warnings: string[] = []
  // Offsets are counted in the file's bytes, not in decoded text: a byte that is not UTF-8 decodes to a
  // three-byte U+FFFD, and a cut made at a decoded length would land inside another line.
  const lineEnd = bytes.lastIndexOf(0x0a) + 1
  const lines = lineEnd
    ? bytes
        .subarray(0, lineEnd - 1)
        .toString('utf8')
        .split('\n')
    : []
  const tail = bytes.subarray(lineEnd).toString('utf8')
  let intactBytes = bytes.length
  let missingNewline = false
  if (tail !== '') {
    if (parseLine(tail) === undefined) {
      intactBytes = lineEnd
      warnings.push(`dropped a torn last line (${bytes.length - lineEnd} bytes) of ${file}`)
    } else {
      lines.push(tail)
      missingNewline = true
    }
  }
  if (!lines.length) throw new SessionError('SESSION_CORRUPT', `${file} has no header line`)
  const header = parseLine(lines[0]) as SessionHeader | undefined
  if (!header || header.type !== 'session' || typeof header.id !== 'string') {
    throw new SessionError('SESSION_CORRUPT', `${file}:1: expected a session header { type: 'session', version, id, createdAt, cwd }`)
  }
  const events: SessionEvent[] = []
  for (let index = 1; index < lines.length; index++) {
    const event = parseLine(lines[index]) as SessionEvent | undefined
    if (!event || !EVENT_TYPES.has(event.type) || typeof event.seq !== 'number' || !event.data || typeof event.data !== 'object') {
      throw new SessionError('SESSION_CORRUPT', `${file}:${index + 1}: not a session event: ${lines[index].slice(0, 120)}`)
    }
    events.push(event)
  }
  const repairs = repairMissingResults(events)
  for (const repair of repairs) {
    const data = repair.data as SessionEventMap['tool/result']
    warnings.push(`tool call ${data.callId} (${data.name}) had no result; recorded ABORTED_BEFORE_DISPATCH`)
  }
  events.push(...repairs)
  return { file, header, events, warnings, intactBytes, missingNewline, repairs }
}

function parseLine(line: string): any {
  try {
    const value = JSON.parse(line)
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** Synthetic results for the calls of the last assistant turn that no `tool/result` answers. */
export function repairMissingResults(events: readonly SessionEvent[]): SessionEvent[] {
  let last = -1
  for (let index = events.length - 1; index >= 0; index--) {
    const type = events[index].type
    if (type === 'assistant/message') {
      last = index
      break
    }
    // A later user message means the turn was already closed; nothing dangles at the tail.
    if (type === 'user/message' && !(events[index].data as SessionEventMap['user/message']).source) return []
  }
  if (last < 0) return []
  const calls = (events[last].data as SessionEventMap['assistant/message']).toolCalls ?? []
  const answered = new Set<string>()
  for (let index = last + 1; index < events.length; index++) {
    if (events[index].type === 'tool/result') answered.add((events[index].data as SessionEventMap['tool/result']).callId)
  }
  let seq = events.reduce((max, event) => Math.max(max, event.seq), 0)
  const time = new Date().toISOString()
  // The log cannot tell whether a pending call had started (results commit in model order), so the
  // text says so instead of claiming it never ran.
  const error = new ToolAbortedBeforeDispatchError(
    "the session ended before this call's result was recorded; it may or may not have run, so check its effects before retrying",
  )
  return calls
    .filter((call) => !answered.has(call.id))
    .map((call) => ({
      type: 'tool/result' as const,
      seq: ++seq,
      time,
      data: {
        callId: call.id,
        name: call.name,
        content: [{ type: 'text' as const, text: `Error: ${error.message}` }],
        isError: true,
        error: { message: error.message, code: error.code },
      },
    }))
}
