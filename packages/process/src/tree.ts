import { randomBytes } from 'node:crypto'
import { environHolds, forkCount, hasProc, isDead, listPids, listPidsSince, readProcess, type ProcessInfo } from './proc.js'

/**
 * The variable every process of a tree inherits. Its value is a `:`-separated list of tree tokens: a
 * tree started from inside another (an agent run by a command of another agent) appends its own, so the
 * outer tree still finds the inner one's processes.
 */
export const TREE_VARIABLE = 'CORDAGE_PROCESS_TREE'

/** How a tree is ended. */
export interface TerminateOptions {
  /** Sent first to every member (default `['SIGTERM']`). */
  signals?: NodeJS.Signals[]
  /** Time after the first signals before SIGKILL. */
  graceMs: number
  /** How long to wait for SIGKILL to take effect before giving up (default 2000). */
  killWaitMs?: number
}

// A tree's token: this process's random prefix and a counter. A token only has to differ from every
// other tree's (a process that copies one can only get itself killed with that tree); fresh random bytes
// per tree measured 25 µs each between spawns (2 µs in isolation).
const PROCESS_PREFIX = randomBytes(9).toString('hex')
let treeCount = 0

/** A token no other tree on the machine has: this process's random prefix and a counter. */
export function newTreeToken(): string {
  return `${PROCESS_PREFIX}${(++treeCount).toString(36)}`
}

const POLL_MS = 20
// Between full scans, only the members already found are checked (one stat read each); a full scan
// every few polls finds what they forked meanwhile.
const FULL_SCAN_EVERY = 5
const DEFAULT_KILL_WAIT_MS = 2000

/**
 * The processes one program started, found wherever they went: the members of its process group and
 * session, their descendants, and every process whose environment carries the tree's marker (which
 * survives `setsid`, double forks and the death of the parents in between). Cordis-free.
 */
export class ProcessTree {
  /** The token this tree appends to {@link TREE_VARIABLE}: unique on the machine, not secret. */
  readonly token: string
  /** The marker value the first process must be started with (`TREE_VARIABLE=value`). */
  readonly marker: string
  private leader: number | undefined
  private leaderStart = 0
  private forksAtAdoption: number | undefined
  /** The machine's fork count just before the first process was started (see `scan`). */
  private forksBeforeStart: number | undefined
  // `pid:start` → whether that process carries the marker. A process's start environment is fixed at
  // exec, so a verdict stays true for its life, even if it later scrubs the memory /proc reads.
  private readonly verdicts = new Map<string, boolean>()
  private known = new Map<number, number>()

  /** `inherited`: the marker of the tree this one is started inside (default: this process's own). */
  constructor(inherited: string | undefined = process.env[TREE_VARIABLE], token: string = newTreeToken()) {
    this.token = token
    this.marker = inherited ? `${inherited}:${token}` : token
  }

  /**
   * The processes that carry `token` in their marker, wherever they came from: a tree with no leader, to
   * `terminate` what a dead process left behind (its own tree token, or one it set for its whole
   * environment). Their group, session and descendants count too, as for any tree.
   */
  static marked(token: string): ProcessTree {
    if (!token || token.includes(':')) throw new RangeError(`a tree token is a non-empty string without ':', got ${JSON.stringify(token)}`)
    return new ProcessTree(undefined, token)
  }

  /** A copy of `env` with the marker set, for the tree's first process (to be started right after). */
  environment(env: Record<string, string>): Record<string, string> {
    this.forksBeforeStart = forkCount()
    return { ...env, [TREE_VARIABLE]: this.marker }
  }

  /** Records the first process (the leader of its own group or session, when it made one). */
  adopt(pid: number): void {
    // A count taken before the start is older, so it can only widen the pids a scan reads.
    this.forksAtAdoption = this.forksBeforeStart ?? forkCount()
    this.leader = pid
    this.leaderStart = readProcess(pid)?.start ?? 0
  }

  /** Live member pids, or undefined where `/proc` is missing (then only the leader's group is known). */
  members(): number[] | undefined {
    const found = this.scan()
    return found && [...found.keys()]
  }

  /** Whether any member is alive (zombies excepted). */
  alive(): boolean {
    const found = this.scan()
    if (found) return found.size > 0
    return this.leader !== undefined && signalOne(-this.leader, 0)
  }

  /** Sends `signals` to every member; returns how many were found. */
  signal(signals: readonly (NodeJS.Signals | 0)[]): number {
    const found = this.scan()
    if (!found) {
      if (this.leader === undefined) return 0
      for (const name of signals) signalOne(-this.leader, name)
      return 1
    }
    for (const pid of found.keys()) for (const name of signals) signalOne(pid, name)
    return found.size
  }

  /**
   * Ends the tree: `signals` (SIGTERM by default) to every member, SIGKILL to whatever is alive after
   * `graceMs`; members found later (forked meanwhile) get the signal of the phase they appear in.
   * Resolves true once none is left, false if some survived SIGKILL for `killWaitMs`.
   */
  async terminate(options: TerminateOptions): Promise<boolean> {
    const first = options.signals ?? ['SIGTERM']
    if (!this.signal(first)) return true
    if (await this.waitGone(options.graceMs, first)) return true
    this.signal(['SIGKILL'])
    return this.waitGone(options.killWaitMs ?? DEFAULT_KILL_WAIT_MS, ['SIGKILL'])
  }

  /** SIGKILLs every member synchronously, for `process.on('exit')` where nothing can wait. */
  killNow(): void {
    this.signal(['SIGKILL'])
  }

  /** Resolves true once no member is left, or false after `ms`; newcomers get `signals`. */
  private async waitGone(ms: number, signals: readonly NodeJS.Signals[]): Promise<boolean> {
    const deadline = Date.now() + ms
    for (let poll = 1; ; poll++) {
      let remaining: number
      if (poll % FULL_SCAN_EVERY === 0 || !this.knownAlive()) {
        const before = this.known
        const found = this.scan()
        if (!found) remaining = this.leader !== undefined && signalOne(-this.leader, 0) ? 1 : 0
        else {
          for (const pid of found.keys()) if (!before.has(pid)) for (const name of signals) signalOne(pid, name)
          remaining = found.size
        }
      } else remaining = this.known.size
      if (remaining === 0) return true
      if (Date.now() >= deadline) return false
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  }

  /** Checks the members found by the last scan only; forgets the dead. True while any is alive. */
  private knownAlive(): boolean {
    for (const [pid, start] of this.known) {
      const info = readProcess(pid)
      if (!info || info.start !== start || isDead(info)) this.known.delete(pid)
    }
    return this.known.size > 0
  }

  /** One full pass over `/proc`: live members by pid (with their start times), or undefined without `/proc`. */
  private scan(): Map<number, number> | undefined {
    if (!hasProc) return undefined
    if (this.leader !== undefined && this.leaderStart && this.forksBeforeStart !== undefined) {
      // Starting the leader was one fork. If the machine has made no other since, the leader is the only
      // process the tree can have: one read instead of a pass over /proc (a command like `true` forks nothing).
      const forks = forkCount()
      if (forks !== undefined && forks - this.forksBeforeStart <= 1) {
        const info = readProcess(this.leader)
        const live = new Map<number, number>()
        if (info && info.start === this.leaderStart && !isDead(info)) live.set(this.leader, info.start)
        this.known = live
        return live
      }
    }
    // Only processes created since the leader can belong to it: their pids come after its pid.
    const pids = this.leader === undefined || !this.leaderStart ? listPids() : listPidsSince(this.leader, this.forksAtAdoption)
    if (!pids) return undefined
    const candidates: ProcessInfo[] = []
    let leaderReused = false
    for (const pid of pids) {
      if (pid === process.pid) continue
      const info = readProcess(pid)
      // Nothing started before the leader can belong to it (its group and session did not exist yet).
      if (!info || info.start < this.leaderStart) continue
      if (pid === this.leader && this.leaderStart && info.start !== this.leaderStart) leaderReused = true
      candidates.push(info)
    }
    // A reused leader pid means its group and session are empty: the kernel keeps ids in use as either.
    const leader = leaderReused ? undefined : this.leader
    const members = new Map<number, ProcessInfo>()
    const children = new Map<number, ProcessInfo[]>()
    for (const info of candidates) {
      if (info.pid === leader || (leader !== undefined && (info.group === leader || info.session === leader))) members.set(info.pid, info)
      const siblings = children.get(info.parent)
      if (siblings) siblings.push(info)
      else children.set(info.parent, [info])
    }
    addDescendants(members, children)
    const marked = new Map<number, ProcessInfo>()
    for (const info of candidates) if (!members.has(info.pid) && this.isMarked(info)) marked.set(info.pid, info)
    if (marked.size) {
      addDescendants(marked, children)
      for (const [pid, info] of marked) members.set(pid, info)
    }
    const live = new Map<number, number>()
    for (const [pid, info] of members) if (!isDead(info)) live.set(pid, info.start)
    this.known = live
    // Verdicts of processes gone since are dropped, so a long-lived tree's memory stays bounded.
    if (this.verdicts.size > candidates.length) {
      const present = new Set(candidates.map((info) => `${info.pid}:${info.start}`))
      for (const key of this.verdicts.keys()) if (!present.has(key)) this.verdicts.delete(key)
    }
    return live
  }

  private isMarked(info: ProcessInfo): boolean {
    const key = `${info.pid}:${info.start}`
    let verdict = this.verdicts.get(key)
    if (verdict === undefined) {
      const holds = environHolds(info.pid, TREE_VARIABLE, this.token)
      // Unreadable (gone, another user's): ask again next time rather than remember a guess.
      if (holds === undefined) return false
      verdict = holds
      this.verdicts.set(key, verdict)
    }
    return verdict
  }
}

function addDescendants(members: Map<number, ProcessInfo>, children: Map<number, ProcessInfo[]>): void {
  const stack = [...members.keys()]
  while (stack.length) {
    for (const child of children.get(stack.pop()!) ?? []) {
      if (members.has(child.pid)) continue
      members.set(child.pid, child)
      stack.push(child.pid)
    }
  }
}

/** Signals one pid (or a group, negative); false when it no longer exists. */
function signalOne(pid: number, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, name)
    return true
  } catch (error) {
    // EPERM: it exists but belongs to someone else (a setuid program); alive, and out of reach.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
