import type { HookContext } from '@cordage/core'

/**
 * Something an agent should learn before its next model request (a background job ended, a watched
 * file changed): `source` names who says it, `text` is what the model reads as a user-role context.
 */
export interface AgentNotice extends HookContext {
  /**
   * The agents it is for, as keys of an `AgentLineage` (`null`: a top-level agent without an id); an
   * agent run adds it only when its own key is listed. Absent: every run in progress adds it.
   */
  audience?: readonly (string | null)[]
}
