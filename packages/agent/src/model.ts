// The model seam lives in @cordage/services so providers depend on it without depending on the agent;
// the agent re-exports it as part of its own public API.
export type { ModelTool, ToolCall, Message, ThinkingBlock, Usage, ModelEvent, CompletionRequest, ModelService, ModelInfo, ModelPrice } from '@cordage/services'
