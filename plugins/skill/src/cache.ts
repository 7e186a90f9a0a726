import { statSync } from 'node:fs'
import { discoverSkills, type SkillEntry, type SkillProblem } from './discover.js'

// File timestamps come from a coarse clock (a kernel tick; a second or two on some filesystems), so a file
// changed again within the same tick after a scan keeps its stamp. Anything modified this recently
// before a scan is not trusted: the next use scans again, until the window has passed.
const RACY_MS = 2_000

/** What identifies one version of a path: inode, size, modification and change times (or its absence). */
function stampOf(path: string): { stamp: string; mtimeMs: number } {
  try {
    const stats = statSync(path, { bigint: true, throwIfNoEntry: false })
    if (!stats) return { stamp: 'missing', mtimeMs: 0 }
    return { stamp: `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`, mtimeMs: Number(stats.mtimeMs) }
  } catch (error) {
    return { stamp: `error:${(error as NodeJS.ErrnoException).code}`, mtimeMs: 0 }
  }
}

/**
 * The skills under the roots, scanned once and kept until something the scan looked at changes: a root
 * (a folder added, removed or relinked), a skill folder (its SKILL.md replaced) or a SKILL.md (edited).
 * Checking costs one `stat` per path, not a read and a YAML parse per skill.
 */
export class SkillCatalog {
  /** How many times the roots were scanned (a scan reads every SKILL.md's front matter). */
  scans = 0
  /** The real paths of the roots that existed at the last scan: what skill files must lie inside. */
  realRoots: string[] = []
  private skills = new Map<string, SkillEntry>()
  private stamps = new Map<string, string>()
  private racyUntil = 0

  constructor(
    private readonly roots: readonly string[],
    private readonly maxSkillBytes: number,
    private readonly report: (problems: SkillProblem[]) => void,
  ) {}

  /** The current skills by name: the cached scan while nothing changed, else a fresh one. */
  current(): Map<string, SkillEntry> {
    if (this.scans > 0 && Date.now() >= this.racyUntil && this.unchanged()) return this.skills
    const stamps = new Map<string, string>()
    let newest = 0
    const started = Date.now()
    const { skills, problems, realRoots } = discoverSkills(this.roots, {
      maxSkillBytes: this.maxSkillBytes,
      // Stamped before it is read, so a change during the scan shows at the next check.
      observe: (path) => {
        const { stamp, mtimeMs } = stampOf(path)
        stamps.set(path, stamp)
        newest = Math.max(newest, mtimeMs)
      },
    })
    this.scans++
    this.skills = skills
    this.realRoots = realRoots
    this.stamps = stamps
    this.racyUntil = newest > started - RACY_MS ? newest + RACY_MS : 0
    this.report(problems)
    return skills
  }

  private unchanged(): boolean {
    for (const [path, stamp] of this.stamps) if (stampOf(path).stamp !== stamp) return false
    return true
  }
}
