import { readdirSync, readFileSync } from 'node:fs'

const POLL_MS = 20

/** Sends `signal` to every process in the group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ESRCH') return false
    // EPERM: a member exists but belongs to someone else; it is alive and out of our reach.
    if (code === 'EPERM') return true
    throw error
  }
}

/**
 * Whether any live (non-zombie) process remains in the group. Orphaned grandchildren that already
 * exited may linger as zombies when the init process does not reap them; they hold nothing, so on
 * Linux `/proc` is consulted to ignore them. Elsewhere a zero signal answers.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false
  if (process.platform !== 'linux') return true
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    // Fields after the parenthesised command name: state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true
  }
  return false
}

/** Resolves true once no live process remains in the group, or false after `ms`. */
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  return true
}

/**
 * Kills a whole process group: SIGTERM, then SIGKILL to whatever is still alive after `graceMs`.
 * Resolves true once every member is dead (false if some survived even SIGKILL for 2 s).
 */
export async function killGroup(pgid: number, graceMs: number): Promise<boolean> {
  if (!groupAlive(pgid)) return true
  signalGroup(pgid, 'SIGTERM')
  if (await waitGroupGone(pgid, graceMs)) return true
  signalGroup(pgid, 'SIGKILL')
  return waitGroupGone(pgid, 2000)
}
