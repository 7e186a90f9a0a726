import { ConfigError } from '@cordage/core'
import type { JobsService } from '@cordage/services'
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
  /** The jobs service, looked up per call (background sends). */
  jobs(): JobsService | undefined
}

/** Refuses a default above its maximum (`cols` over `maxCols`, …) at load, naming the plugin and the key. */
export function assertLimits(plugin: string, config: Pick<TerminalToolOptions, 'cols' | 'maxCols' | 'rows' | 'maxRows' | 'defaultWaitMs' | 'maxWaitMs'>): void {
  for (const [key, max] of [
    ['cols', 'maxCols'],
    ['rows', 'maxRows'],
    ['defaultWaitMs', 'maxWaitMs'],
  ] as const) {
    if (config[key] > config[max]) throw new ConfigError(plugin, [{ path: key, message: `${config[key]} exceeds ${max} (${config[max]})` }])
  }
}
