import { readdirSync, readFileSync } from 'node:fs'

const POLL_MS = 20

interface ProcessInfo {
  pid: number
  ppid: number
  session: number
  state: string
}

function readProcesses(): ProcessInfo[] | undefined {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return undefined
  }
  const processes: ProcessInfo[] = []
  for (const entry of entries) {
    const code = entry.charCodeAt(0)
    if (code < 48 || code > 57) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    // Fields after the parenthesised command name (which may itself hold spaces): state ppid pgrp session …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    processes.push({ pid: Number(entry), ppid: Number(fields[1]), session: Number(fields[3]), state: fields[0] ?? '' })
  }
  return processes
}

/**
 * The live processes a terminal owns: every member of the session its leader created (interactive shells
 * put each job in its own process group, so the leader's group alone misses `vi` or `sleep 1000 &`), plus
 * descendants that left the session with `setsid` while their parent was still there. Zombies are
 * skipped: they hold nothing and only their parent can reap them. Without `/proc`, the leader's group.
 */
export function sessionMembers(leader: number): number[] | undefined {
  const processes = readProcesses()
  if (!processes) return undefined
  const children = new Map<number, number[]>()
  const members = new Set<number>()
  for (const info of processes) {
    if (info.session === leader) members.add(info.pid)
    const siblings = children.get(info.ppid)
    if (siblings) siblings.push(info.pid)
    else children.set(info.ppid, [info.pid])
  }
  const stack = [...members]
  while (stack.length) {
    for (const child of children.get(stack.pop()!) ?? []) {
      if (!members.has(child)) {
        members.add(child)
        stack.push(child)
      }
    }
  }
  const dead = new Set(processes.filter((info) => info.state === 'Z' || info.state === 'X').map((info) => info.pid))
  members.delete(process.pid)
  return [...members].filter((pid) => !dead.has(pid))
}

/** The terminal's foreground process group (`tpgid` of the leader), or the leader's own group. */
export function foregroundGroup(leader: number): number {
  try {
    const stat = readFileSync(`/proc/${leader}/stat`, 'utf8')
    const tpgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[5])
    return tpgid > 0 ? tpgid : leader
  } catch {
    return leader
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // Gone already, or not ours to signal.
  }
}

function signalAll(leader: number, names: NodeJS.Signals[]): number {
  const members = sessionMembers(leader)
  if (!members) {
    for (const name of names) signal(-leader, name)
    return 1
  }
  for (const pid of members) for (const name of names) signal(pid, name)
  return members.length
}

function alive(leader: number): boolean {
  const members = sessionMembers(leader)
  if (members) return members.length > 0
  try {
    process.kill(-leader, 0)
    return true
  } catch {
    return false
  }
}

async function waitGone(leader: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (alive(leader)) {
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  return true
}

/**
 * Ends every process of a terminal: SIGHUP (a hung-up terminal; interactive shells ignore SIGTERM but
 * not this) with SIGTERM and SIGCONT (so stopped jobs can act on it), then SIGKILL to whatever is still
 * alive after `graceMs`. Resolves true once nothing is left (false if something survived SIGKILL for 2 s).
 */
export async function killSession(leader: number, graceMs: number): Promise<boolean> {
  if (!signalAll(leader, ['SIGHUP', 'SIGTERM', 'SIGCONT'])) return true
  if (await waitGone(leader, graceMs)) return true
  signalAll(leader, ['SIGKILL'])
  return waitGone(leader, 2000)
}

/** Synchronous SIGKILL of every process of a terminal, for `process.on('exit')` where nothing can wait. */
export function killSessionNow(leader: number): void {
  signalAll(leader, ['SIGKILL'])
}
