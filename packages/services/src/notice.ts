import type { HookContext } from '@cordage/core'

/**
 * Something an agent should learn before its next model request (a background job ended, a watched
 * file changed): `source` names who says it, `text` is what the model reads as a user-role context.
 */
export type AgentNotice = HookContext
