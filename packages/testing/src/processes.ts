import { afterEach } from 'vitest'
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

/**
 * A set of pids a test saw its subject start, each SIGKILLed after every test of the file (then
 * forgotten): a test that fails because a process outlived its owner does not leave it on the machine.
 */
export function killAfterEach(): Set<number> {
  const pids = new Set<number>()
  afterEach(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // Already gone, as it should be.
      }
    }
    pids.clear()
  })
  return pids
}
