import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs'

/** One process as `/proc/<pid>/stat` describes it. */
export interface ProcessInfo {
  pid: number
  /** Parent process id. */
  parent: number
  /** Process group id. */
  group: number
  /** Session id. */
  session: number
  /** One letter: R, S, D, T, Z (zombie), X (dead), … */
  state: string
  /** The foreground process group of its controlling terminal (0 or -1 without one). */
  terminalGroup: number
  /** Start time in clock ticks after boot: with the pid, it names one process even after the pid is reused. */
  start: number
}

// One reused buffer: a stat line is a few hundred bytes, and a scan reads one per process.
const statBuffer = Buffer.alloc(4096)

/** Whether this machine has a Linux-style `/proc` to read processes from. */
export const hasProc = process.platform === 'linux' && readable('/proc/self/stat')

function readable(path: string): boolean {
  try {
    readFileSync(path)
    return true
  } catch {
    return false
  }
}

/** Reads one process's stat line, or undefined when it is gone. */
export function readProcess(pid: number): ProcessInfo | undefined {
  let descriptor: number
  try {
    descriptor = openSync(`/proc/${pid}/stat`, 'r')
  } catch {
    return undefined
  }
  let length: number
  try {
    length = readSync(descriptor, statBuffer, 0, statBuffer.length, 0)
  } catch {
    return undefined
  } finally {
    closeSync(descriptor)
  }
  const line = statBuffer.toString('latin1', 0, length)
  // The command name is parenthesised and may itself hold spaces and parentheses: fields follow the last ')'.
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ')
  return {
    pid,
    parent: Number(fields[1]),
    group: Number(fields[2]),
    session: Number(fields[3]),
    state: fields[0] ?? '',
    terminalGroup: Number(fields[5]),
    start: Number(fields[19]),
  }
}

/** Every process visible in `/proc` (pids only), or undefined without `/proc`. */
export function listPids(): number[] | undefined {
  if (!hasProc) return undefined
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return undefined
  }
  const pids: number[] = []
  for (const entry of entries) {
    const code = entry.charCodeAt(0)
    if (code >= 48 && code <= 57) pids.push(Number(entry))
  }
  return pids
}

// /proc/stat and /proc/loadavg are regenerated on every read from offset 0: one descriptor each, kept
// for the life of the process, makes a read one system call instead of four (they are read per scan).
const descriptors = new Map<string, number>()
const numberBuffer = Buffer.alloc(16384)

function readNumber(path: string, pattern: RegExp): number | undefined {
  try {
    let descriptor = descriptors.get(path)
    if (descriptor === undefined) descriptors.set(path, (descriptor = openSync(path, 'r')))
    const length = readSync(descriptor, numberBuffer, 0, numberBuffer.length, 0)
    const match = pattern.exec(numberBuffer.toString('latin1', 0, length))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

const pidMax = hasProc ? readNumber('/proc/sys/kernel/pid_max', /(\d+)/) : undefined

/** Processes created on the machine since boot (`processes` in /proc/stat): a clock that counts forks. */
export function forkCount(): number | undefined {
  return hasProc ? readNumber('/proc/stat', /^processes (\d+)$/m) : undefined
}

/**
 * The pids that can belong to processes created since `first` was (`forks` = {@link forkCount} then),
 * itself included. Linux hands out pids in increasing order, wrapping at `pid_max`: unless a whole
 * cycle of pids was used since, every newer process has a pid from `first` up to the newest one
 * (`/proc/loadavg`), so older processes need no reading at all. Otherwise, every pid.
 */
export function listPidsSince(first: number, forks: number | undefined): number[] | undefined {
  const pids = listPids()
  if (!pids) return undefined
  // Read after the listing, so the newest pid covers every listed one.
  const newest = readNumber('/proc/loadavg', /\/\d+ (\d+)\s*$/)
  const now = forkCount()
  if (forks === undefined || now === undefined || newest === undefined || pidMax === undefined || now - forks >= pidMax / 2) return pids
  return first <= newest ? pids.filter((pid) => pid >= first && pid <= newest) : pids.filter((pid) => pid >= first || pid <= newest)
}

/** Whether a process state means it holds nothing any more (only its parent can reap it). */
export function isDead(info: ProcessInfo): boolean {
  return info.state === 'Z' || info.state === 'X' || info.state === 'x'
}

/**
 * Whether the environment a process was started with holds `name=value` where `value`, split on `:`,
 * contains `token`. Undefined when it cannot be read (gone, or another user's).
 */
export function environHolds(pid: number, name: string, token: string): boolean | undefined {
  let environ: Buffer
  try {
    environ = readFileSync(`/proc/${pid}/environ`)
  } catch {
    return undefined
  }
  const key = Buffer.from(`${name}=`)
  for (let at = environ.indexOf(key); at >= 0; at = environ.indexOf(key, at + 1)) {
    // Only at the start of an entry: `XCORDAGE_…=` is another variable.
    if (at > 0 && environ[at - 1] !== 0) continue
    let end = environ.indexOf(0, at)
    if (end < 0) end = environ.length
    const value = environ.toString('latin1', at + key.length, end)
    if (value.split(':').includes(token)) return true
  }
  return false
}
