import { readFileSync, readdirSync, readlinkSync } from 'node:fs'

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

/** Whether `pid` is a live process (Linux: a zombie awaiting its reaper counts as gone), for disposal tests. */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The state follows the parenthesised command name, which may itself contain spaces or parentheses.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== '' && state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}
