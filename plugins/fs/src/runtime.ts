import type { ReadTracker } from './tracker.js'
import type { Workspace } from './paths.js'

/** Resolved plugin settings shared by the tools of one plugin instance. */
export interface FsSettings {
  maxReadBytes: number
  maxReadLines: number
  maxLineLength: number
  maxEditBytes: number
  maxResults: number
  pageSize: number
  pageBytes: number
}

/** What every tool of one plugin instance shares: settings, the workspace, read tracking and the search engine. */
export interface FsRuntime {
  settings: FsSettings
  workspace: Workspace
  tracker: ReadTracker
  /** Absolute path of the ripgrep binary, or undefined to use the pure-JS search. */
  rgPath: string | undefined
  /** Aborts when the plugin unloads: searches still running stop and their processes are killed. */
  lifetime: AbortSignal
}
