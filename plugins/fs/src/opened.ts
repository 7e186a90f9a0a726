import type { Context } from 'cordis'
import { ToolDeniedError, type ToolExec } from '@cordage/core'
import type { OpenedAccess, OpenedFile } from '@cordage/services'

/** Tells path rules what a tool opened for a call; throws `DENIED` when one refuses it. */
export type OpenedGate = (exec: ToolExec, file: OpenedFile, access: OpenedAccess) => void

/**
 * The gate behind every file the tools open for a call: `paths/opened` lets the policy plugin judge the
 * file the descriptor is (its real location and inode), not only the spelling it checked before the call
 * — a symlink or hard link swapped in between, or another name of a denied file, is refused here.
 */
export function openedGate(ctx: Context): OpenedGate {
  // Read once: a Context property read per call costs more than the dispatch it would guard.
  const bail = ctx.bail
  return (exec, file, access) => {
    const reason = bail('paths/opened', exec, file, access)
    if (reason !== undefined) throw new ToolDeniedError(reason)
  }
}
