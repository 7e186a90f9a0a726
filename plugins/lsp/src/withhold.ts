import { fileURLToPath } from 'node:url'

/** The reason the caller may not ask about the file at `path` (the same call, another path), or undefined. */
export type ReadCheck = (path: string) => string | undefined

/**
 * Decides which result URIs the caller may see: a language server answers from the whole project, so a
 * definition, reference or symbol can point into (and a hover quote) a file the caller's path rules deny.
 * Each file is checked once per call, as the call itself would be for that path; the asked file was
 * admitted already, and URIs that name no file are kept. Counts what it withholds.
 */
export class ResultScreen {
  withheld = 0
  private readonly verdicts = new Map<string, boolean>()

  constructor(
    private readonly askedUri: string,
    private readonly check: ReadCheck,
  ) {}

  /** Whether the caller may see a result in `uri` (not counted). */
  allows(uri: string): boolean {
    if (uri === this.askedUri || !uri.startsWith('file:')) return true
    let verdict = this.verdicts.get(uri)
    if (verdict === undefined) {
      let path: string | undefined
      try {
        path = fileURLToPath(uri)
      } catch {
        // A malformed file URI cannot be checked, so it is not shown (fail closed).
      }
      verdict = path !== undefined && this.check(path) === undefined
      this.verdicts.set(uri, verdict)
    }
    return verdict
  }

  /** The items the caller may see; the rest are counted as withheld. */
  keep<T extends { uri: string }>(items: T[]): T[] {
    const kept = items.filter((item) => this.allows(item.uri))
    this.withheld += items.length - kept.length
    return kept
  }
}
