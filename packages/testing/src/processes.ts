import { readdirSync, readlinkSync } from 'node:fs'

/** Paths under `dir` this process holds open (Linux: read from /proc/self/fd), for disposal tests. */
export function openFilesUnder(dir: string): string[] {
  const open: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith(dir)) open.push(target)
    } catch {
      // Closed while listing.
    }
  }
  return open
}
