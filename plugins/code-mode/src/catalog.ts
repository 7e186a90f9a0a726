import type { JsonValue } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import { generateSdk } from './sdk.js'

/** The tools programs may call and the SDK text declaring them. */
export interface CatalogSnapshot {
  names: readonly string[]
  sdk: string
}

/**
 * The visible tool set, rebuilt lazily after `invalidate()` (on `tools/changed`). `list()` reads
 * run_code's description getter, which reads this catalog: while building, the getter sees an empty
 * snapshot instead of recursing.
 */
export class Catalog {
  private snapshot: CatalogSnapshot | undefined
  private building = false

  constructor(
    private readonly registry: ToolRegistry,
    private readonly hidden: ReadonlySet<string>,
  ) {}

  /** Forgets the snapshot; the next `current()` rebuilds it. */
  invalidate(): void {
    this.snapshot = undefined
  }

  /** The visible tools (sorted by name) and their SDK. */
  current(): CatalogSnapshot {
    if (this.snapshot) return this.snapshot
    if (this.building) return { names: [], sdk: '' }
    this.building = true
    try {
      const visible = this.registry.list().filter((tool) => !this.hidden.has(tool.name))
      this.snapshot = { names: visible.map((tool) => tool.name), sdk: generateSdk(visible) }
      return this.snapshot
    } finally {
      this.building = false
    }
  }

  /** Whether a call may overlap others: `concurrency: 'parallel'`, or a function answering `true`. */
  isParallel(name: string, args: JsonValue): boolean {
    const concurrency = this.registry.get(name)?.concurrency
    return concurrency === 'parallel' || (typeof concurrency === 'function' && concurrency(args) === true)
  }
}
