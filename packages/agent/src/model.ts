// The model seam lives in @cordage/services so providers depend on it without depending on the agent;
// the agent re-exports it as part of its own public API.
export type { ModelTool, ToolCall, Message, Usage, ModelEvent, CompletionRequest, ModelService } from '@cordage/services'
