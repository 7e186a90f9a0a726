export type { ToolCall, Message, Usage, ModelEvent, CompletionRequest, ModelService } from './model.js'
