import type { Context } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import type { JsonValue, ToolDefinition } from '@cordage/core'

/** The part of the optional `spill` service the paged tools use. */
export interface SpillService {
  save(input: { toolName: string; callId: string; suggestedName: string; text: string }): Promise<{ path: string; bytes: number }>
}

/** A tool whose list value is rendered one page at a time. */
export interface PagedTool {
  definition: ToolDefinition
  /** File name hint for the spilled list. */
  spillName: string
  fullText(value: any): string
  /** Whether the first page shows every item. */
  fits(value: any): boolean
  page(args: any, value: any, spilled?: string): string
}

/**
 * Listens (not prepended) on `tools/post-execute`: after the inner listeners settle, a direct, accepted,
 * unmodified glob/grep result whose list does not fit on one page is saved in full through `ctx.spill`
 * (when loaded) and its content re-rendered with the file's path. Spilling fails open.
 */
export function spillPages(ctx: Context, tools: PagedTool[]): void {
  const byName = new Map(tools.map((tool) => [tool.definition.name, tool]))
  const logger = ctx.logger('fs')
  ctx.on('tools/post-execute', async (exec, result, next) => {
    const decision = await next()
    const tool = byName.get(exec.name)
    if (!tool || exec.parent !== undefined || result.isError || decision?.kind !== 'accept' || decision.content !== undefined || decision.value !== undefined) return decision
    const value = result.value as JsonValue
    if (tool.fits(value)) return decision
    // A same-named tool of another plugin is not ours to page.
    if ((ctx.get('tools') as ToolRegistry | undefined)?.get(exec.name) !== tool.definition) return decision
    const spill = ctx.get('spill') as SpillService | undefined
    if (!spill) return decision
    try {
      const saved = await spill.save({ toolName: exec.name, callId: exec.callId, suggestedName: tool.spillName, text: tool.fullText(value) })
      return { ...decision, content: [{ type: 'text', text: tool.page(exec.arguments, value, saved.path) }] }
    } catch (error) {
      logger.warn(`could not spill the full ${exec.name} list (${exec.callId}); the first page is shown: ${error instanceof Error ? error.message : String(error)}`)
      return decision
    }
  })
}
