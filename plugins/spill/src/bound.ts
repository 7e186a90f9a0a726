import type { ContentBlock, ToolExec, ToolExecutionResult } from '@cordage/core'
import type { Presenter } from '@cordage/registry'
import { buildPreview, type PreviewOptions } from './preview.js'
import type { SpillInput, SpillSaved } from './store.js'
import { errorMessage } from '@cordage/core'

/** What the generic bounding listener needs; Cordis-free so it can be tested and benchmarked alone. */
export interface BoundOptions extends PreviewOptions {
  /** Tool names whose results are never bounded (their output is already a window, like `read`). */
  skipTools: readonly string[]
  save(input: SpillInput): Promise<SpillSaved>
  warn(message: string): void
}

type Next = () => Promise<ContentBlock[]>

/**
 * The generic spill policy as a `tools/present` listener: the registry runs it after every
 * post-execute decision (policy, hooks, tool-owned projections) has settled, on direct successes
 * only, so text a policy removed never reaches a spill file. It delegates first, so other presenters
 * settle too, then bounds all-text content. Storage failures keep the content and warn (spill fails open).
 */
export function createBoundListener(options: BoundOptions): Presenter {
  const skip = new Set(options.skipTools)
  // Any text of at most max/3 UTF-16 units fits: one unit never encodes to more than 3 bytes.
  const quickFit = Math.floor(options.maxInlineBytes / 3)
  return async (exec: ToolExec, _result: ToolExecutionResult, next: Next): Promise<ContentBlock[]> => {
    const content = await next()
    if (exec.parent !== undefined || skip.has(exec.name)) return content
    if (!Array.isArray(content) || content.length === 0) return content
    let units = 0
    for (const block of content) {
      if (!block || block.type !== 'text' || typeof block.text !== 'string') return content
      units += block.text.length + 1
    }
    if (units <= quickFit) return content
    const text = content.length === 1 ? (content[0] as { text: string }).text : content.map((block) => (block as { text: string }).text).join('\n')
    // More UTF-16 units than the limit means more bytes too: only short texts need measuring
    // (a large one is measured by the write itself, saving a full pass).
    if (text.length <= options.maxInlineBytes && Buffer.byteLength(text, 'utf8') <= options.maxInlineBytes) return content
    let saved: SpillSaved
    try {
      saved = await options.save({ toolName: exec.name, callId: exec.callId, suggestedName: 'output', text })
    } catch (error) {
      options.warn(`could not spill the output of "${exec.name}" (${exec.callId}, ${text.length} characters); keeping it inline: ${errorMessage(error)}`)
      return content
    }
    return [{ type: 'text', text: buildPreview(text, saved.bytes, saved.path, options) }]
  }
}
