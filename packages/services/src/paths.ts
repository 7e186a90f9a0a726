/**
 * A file or directory a tool opened for a call: where its descriptor actually is and which inode it is.
 * Tools report it on `paths/opened` so path rules judge what was opened, not only the spelling the call
 * was checked under (a symlink or hard link swapped in between, or another name of a denied file).
 */
export interface OpenedFile {
  /** Absolute real path of the open descriptor (read back from `/proc/self/fd` where there is one). */
  real: string
  dev: bigint
  ino: bigint
  /** Link count: above 1, the same file has other names. */
  nlink: bigint
  directory: boolean
}

/** How the call uses the opened file: `write` for a file it changes (its old content may show too). */
export type OpenedAccess = 'read' | 'write'
