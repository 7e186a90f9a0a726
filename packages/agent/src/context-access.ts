import type { Context } from 'cordis'
import { hookTable, type HookTable } from '@cordage/registry/cordis-seam'

// What a run needs of its context, read once per context: a property read through the context costs
// several proxy hops per run, while the function it returns is bound to that context and
// stays valid for its lifetime, and its listener table is live.
export interface ContextAccess {
  emit: Context['emit']
  hooks: HookTable
}
const access = new WeakMap<Context, ContextAccess>()

export function contextAccess(ctx: Context): ContextAccess {
  let found = access.get(ctx)
  if (!found) access.set(ctx, (found = { emit: ctx.emit, hooks: hookTable(ctx) }))
  return found
}
