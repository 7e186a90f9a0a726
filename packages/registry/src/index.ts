export { ToolRegistry } from './registry.js'
export type { ToolSchema, ExecuteInput, PreDecision, PostDecision, ToolGuard, ApprovalService } from './types.js'
export { ToolRegistry as default } from './registry.js'
