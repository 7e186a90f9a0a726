import { watch, type FSWatcher } from 'node:fs'

/** What one path argument resolves to, and what its resolution read. */
export interface Resolution<T> {
  value: T
  /** Every directory a name was looked up in while resolving. */
  looked: ReadonlySet<string>
}

interface Watched {
  watcher: FSWatcher
  /** The cached inputs whose resolution looked a name up here. */
  inputs: Set<string>
}

/**
 * Resolutions of path arguments (canonical real paths and what the final file is), kept until the file
 * system reports a change where they looked: each directory a resolution looked a name up in is watched
 * (inotify, through `fs.watch`), and any event there — an entry created, removed, renamed or replaced by
 * a link, or a file's metadata changed — drops every resolution that looked there. Only resolutions that
 * stayed at or under the root are kept (the root's own location is fixed at load); a directory that
 * cannot be watched (the watch limit reached) means no caching. Events arrive from the event loop, so a
 * change is seen by checks that start after its event was delivered: tools that report what they opened
 * (`paths/opened`) are judged on the opened file itself.
 */
export class ResolutionCache<T> {
  private readonly entries = new Map<string, { value: T; directories: string[] }>()
  private readonly watched = new Map<string, Watched>()
  private closed = false

  constructor(
    private readonly root: string,
    private readonly capacity: number,
  ) {}

  /** The cached value for `input`, if its directories have not changed since. */
  get(input: string): T | undefined {
    return this.entries.get(input)?.value
  }

  /** Keeps `resolution` for `input` while every directory it looked in can be watched. */
  set(input: string, resolution: Resolution<T>): void {
    if (this.closed) return
    const directories = [...resolution.looked]
    if (!directories.every((directory) => this.inside(directory))) return
    for (const directory of directories) {
      if (this.watched.has(directory)) continue
      let watcher: FSWatcher
      try {
        // Not persistent: a watch never keeps the process alive.
        watcher = watch(directory, { persistent: false }, () => this.invalidate(directory))
      } catch {
        this.release(input, directories)
        return
      }
      watcher.on('error', () => this.invalidate(directory))
      this.watched.set(directory, { watcher, inputs: new Set() })
    }
    this.entries.delete(input)
    this.entries.set(input, { value: resolution.value, directories })
    for (const directory of directories) this.watched.get(directory)!.inputs.add(input)
    if (this.entries.size > this.capacity) this.drop(this.entries.keys().next().value!)
  }

  /** How many directories are watched (for tests asserting disposal). */
  get watchCount(): number {
    return this.watched.size
  }

  /** Stops every watch and forgets everything (on unload). */
  close(): void {
    this.closed = true
    for (const { watcher } of this.watched.values()) watcher.close()
    this.watched.clear()
    this.entries.clear()
  }

  private inside(directory: string): boolean {
    return directory === this.root || directory.startsWith(this.root === '/' ? '/' : `${this.root}/`)
  }

  /** Something changed in `directory`: every resolution that looked there is dropped, and so is its watch. */
  private invalidate(directory: string): void {
    const watched = this.watched.get(directory)
    if (!watched) return
    // Dropping an input deletes it from this set as it is visited, which Set iteration allows.
    for (const input of watched.inputs) this.drop(input)
    this.closeWatch(directory)
  }

  private drop(input: string): void {
    const entry = this.entries.get(input)
    if (!entry) return
    this.entries.delete(input)
    this.release(input, entry.directories)
  }

  /** Unlinks `input` from its directories; a directory no cached input depends on is not watched any longer. */
  private release(input: string, directories: readonly string[]): void {
    for (const directory of directories) {
      const watched = this.watched.get(directory)
      if (!watched) continue
      watched.inputs.delete(input)
      if (watched.inputs.size === 0) this.closeWatch(directory)
    }
  }

  private closeWatch(directory: string): void {
    this.watched.get(directory)?.watcher.close()
    this.watched.delete(directory)
  }
}
