import type { Config } from './index.js'
import type { LineIndexCache } from './line-index.js'
import type { OpenedGate } from './opened.js'
import type { ReadTracker } from './tracker.js'
import type { Workspace } from './paths.js'

/** Resolved plugin settings shared by the tools of one plugin instance (the limits of `Config`). */
export type FsSettings = Pick<
  Config,
  'maxReadBytes' | 'maxReadLines' | 'maxLineLength' | 'maxEditBytes' | 'maxDiffBytes' | 'maxResults' | 'pageSize' | 'pageBytes'
>

/** What every tool of one plugin instance shares: settings, the workspace, read tracking and the search engine. */
export interface FsRuntime {
  settings: FsSettings
  workspace: Workspace
  tracker: ReadTracker
  /** Absolute path of the ripgrep binary, or undefined to use the pure-JS search. */
  rgPath: string | undefined
  /** Aborts when the plugin unloads: searches still running stop and their processes are killed. */
  lifetime: AbortSignal
  /** Line indexes of large files read recently (unchanged versions only), for paging without a full scan. */
  lineIndexes: LineIndexCache
  /** Reports each file opened for a call to path rules before it is read or changed (throws `DENIED`). */
  admit: OpenedGate
}
