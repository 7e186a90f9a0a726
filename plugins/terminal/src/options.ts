import type { SessionTable } from './sessions.js'
import type { DeltaLimits } from './screen.js'

/** Everything the terminal tools share: the session table and the resolved configuration. */
export interface TerminalToolOptions {
  table: SessionTable
  root: string
  shell: string
  shellArgs: string[]
  cols: number
  rows: number
  maxCols: number
  maxRows: number
  scrollback: number
  killGraceMs: number
  settleMs: number
  openWaitMs: number
  defaultWaitMs: number
  maxWaitMs: number
  limits: DeltaLimits
  env(requested: Record<string, string> | undefined): Record<string, string>
}
