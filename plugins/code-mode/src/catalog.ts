import { UnknownToolError, type JsonValue } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import { describeToolSdk, generateSdk, type SdkTool } from './sdk.js'

/** The tools programs may call and the SDK text declaring them. */
export interface CatalogSnapshot {
  names: readonly string[]
  sdk: string
  tools: readonly SdkTool[]
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
    if (this.building) return { names: [], sdk: '', tools: [] }
    this.building = true
    try {
      const visible = this.registry.list().filter((tool) => !this.hidden.has(tool.name))
      this.snapshot = { names: visible.map((tool) => tool.name), sdk: generateSdk(visible), tools: visible }
      return this.snapshot
    } finally {
      this.building = false
    }
  }

  /** The full declaration of a visible tool, with docs (`describeTool` in programs); `UNKNOWN_TOOL` for any other name. */
  describe(name: unknown): string {
    const { tools, names } = this.current()
    const tool = tools.find((candidate) => candidate.name === name)
    if (!tool) throw new UnknownToolError(typeof name === 'string' ? name : JSON.stringify(name), [...names], 'is not available to programs')
    return describeToolSdk(tool)
  }

  /** Whether a call may overlap others: `concurrency: 'parallel'`, or a function answering `true`. */
  isParallel(name: string, args: JsonValue): boolean {
    const concurrency = this.registry.get(name)?.concurrency
    return concurrency === 'parallel' || (typeof concurrency === 'function' && concurrency(args) === true)
  }
}
