import type { Context } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import type { JsonValue, ToolDefinition } from '@cordage/core'
import type { SpillService } from '@cordage/services'
import { errorMessage } from '@cordage/core'

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
 * Listens (not prepended) on `tools/present`, the phase after every policy decision: a direct,
 * accepted glob/grep result whose list does not fit on one page, and whose content is still the tool's
 * own first page, is saved in full through `ctx.spill` (when loaded) and re-rendered with the file's
 * path. Running after policy means a list a policy blocked or redacted never reaches a spill file (a
 * replaced value is re-rendered, so its own list is what gets saved), and content a policy replaced is
 * left alone. Generic spill prepends on the same phase and calls `next()` first, so it bounds what this
 * returns whatever the load order. Spilling fails open.
 */
export function spillPages(ctx: Context, tools: PagedTool[]): void {
  const byName = new Map(tools.map((tool) => [tool.definition.name, tool]))
  const logger = ctx.logger('fs')
  const registry: ToolRegistry = ctx.tools
  ctx.on('tools/present', async (exec, result, next) => {
    const content = await next()
    const tool = byName.get(exec.name)
    if (!tool || result.isError) return content
    const value = result.value as JsonValue
    if (tool.fits(value)) return content
    // A same-named tool of another plugin is not ours to page.
    if (registry.get(exec.name) !== tool.definition) return content
    const own = tool.definition.output.render(exec.arguments, value)
    const unchanged = content.length === 1 && own.length === 1 && content[0]!.type === 'text' && own[0]!.type === 'text' && content[0].text === own[0].text
    if (!unchanged) return content
    const spill: SpillService | undefined = ctx.get('spill')
    if (!spill) return content
    try {
      const saved = await spill.save({ toolName: exec.name, callId: exec.callId, suggestedName: tool.spillName, text: tool.fullText(value) })
      return [{ type: 'text', text: tool.page(exec.arguments, value, saved.path) }]
    } catch (error) {
      logger.warn(`could not spill the full ${exec.name} list (${exec.callId}); the first page is shown: ${errorMessage(error)}`)
      return content
    }
  })
}
