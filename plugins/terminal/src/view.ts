import type { ContentBlock } from '@cordage/core'
import type { SendValue, ViewValue } from './schemas.js'
import type { DeltaLimits } from './screen.js'
import type { TerminalSession } from './session.js'
import type { WaitOutcome } from './wait.js'

/** A bounded view of a session: `head` pages forward from `since`, `tail` keeps the newest rows. */
export function viewOf(session: TerminalSession, since: number | undefined, mode: 'head' | 'tail', limits: DeltaLimits): ViewValue {
  const screen = session.screen
  const delta = screen.delta(since ?? Number.MAX_SAFE_INTEGER, mode, limits)
  return { session: session.snapshot(), screen: screen.view(), scrollback: delta }
}

/** `term_1 running` / `term_1 exited with code 0` / `term_1 was killed by SIGHUP`. */
export function describeState(session: ViewValue['session']): string {
  if (session.state === 'running') return `${session.id} running`
  return session.signal ? `${session.id} was killed by ${session.signal}` : `${session.id} exited with code ${session.exitCode}`
}

/**
 * The text a user would read: scrollback rows, then the screen, then one bracketed status line. Rows the
 * result left out are named with the read that fetches them.
 */
export function renderView(value: ViewValue, status: string): ContentBlock[] {
  const { scrollback, screen, session } = value
  const parts: string[] = []
  const paged = scrollback.next < scrollback.end
  if (scrollback.lost) parts.push(`[${scrollback.lost} earlier rows are no longer in the scrollback]`)
  if (scrollback.omitted && !paged) {
    parts.push(
      `[… ${scrollback.omitted} earlier rows left out; terminal_read {"id":"${session.id}","since":${scrollback.from - scrollback.omitted}} shows them …]`,
    )
  }
  parts.push(...scrollback.lines)
  if (paged)
    parts.push(`[… ${scrollback.end - scrollback.next} more scrollback rows; continue with terminal_read {"id":"${session.id}","since":${scrollback.next}} …]`)
  if (screen.alternate) parts.push(`[full-screen program, ${screen.cols}x${screen.rows}${screen.title ? `: ${screen.title}` : ''}]`)
  parts.push(...(screen.lines.some((line) => line !== '') ? screen.lines : ['(blank screen)']))
  const where = session.state === 'running' ? `; cursor at row ${screen.cursor.row}, col ${screen.cursor.col}` : ''
  parts.push(`[${describeState(session)}${where}; next read since ${scrollback.end}${status ? `; ${status}` : ''}]`)
  return [{ type: 'text', text: parts.join('\n') }]
}

const said: Record<WaitOutcome['reason'], (ms: number) => string> = {
  matched: (ms) => `waitFor matched after ${ms} ms`,
  quiet: (ms) => `output went quiet after ${ms} ms (the program may still be running)`,
  elapsed: (ms) => `waited ${ms} ms`,
  timeout: (ms) => `still waiting after ${ms} ms (the program may still be running)`,
  exited: (ms) => `the program ended after ${ms} ms`,
  aborted: (ms) => `the call was cancelled after ${ms} ms`,
}

/** The text of a finished send: what scrolled by, the screen, and why the wait ended. */
export function renderSend(value: SendValue): ContentBlock[] {
  return renderView(value, said[value.wait.reason](value.wait.waitedMs))
}
