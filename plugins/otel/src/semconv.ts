// Names from the OpenTelemetry GenAI semantic conventions (v1.41), copied rather than imported: they
// live in the incubating entry point of @opentelemetry/semantic-conventions, which may change any release.

export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name'
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name'
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model'
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons'
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens'
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens'
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens'
export const ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = 'gen_ai.usage.cache_creation.input_tokens'
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id'
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id'
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name'
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name'
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id'
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type'
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments'
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result'
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages'
export const ATTR_GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages'
export const ATTR_GEN_AI_TOKEN_TYPE = 'gen_ai.token.type'
export const ATTR_ERROR_TYPE = 'error.type'

export const GEN_AI_OPERATION_CHAT = 'chat'
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool'
export const GEN_AI_OPERATION_INVOKE_AGENT = 'invoke_agent'

export const METRIC_GEN_AI_CLIENT_TOKEN_USAGE = 'gen_ai.client.token.usage'
export const METRIC_GEN_AI_CLIENT_OPERATION_DURATION = 'gen_ai.client.operation.duration'

/** Bucket boundaries the conventions advise for `gen_ai.client.token.usage` (powers of 4 up to 4^13). */
export const TOKEN_USAGE_BUCKETS = Array.from({ length: 14 }, (_, index) => 4 ** index)
/** Bucket boundaries the conventions advise for `gen_ai.client.operation.duration`, in seconds (0.01 · 2^n up to 81.92). */
export const OPERATION_DURATION_BUCKETS = Array.from({ length: 14 }, (_, index) => Math.round(0.01 * 2 ** index * 100) / 100)

// Cordage's own names, beside the conventions'.
export const ATTR_TOOL_OUTCOME = 'cordage.tool.outcome'
export const ATTR_POLICY_DECISION = 'cordage.policy.decision'
export const ATTR_RUN_STOP_REASON = 'cordage.run.stop_reason'
export const ATTR_TOOL_NESTED = 'cordage.tool.nested'
export const METRIC_TOOL_CALLS = 'cordage.tool.calls'
export const METRIC_TOOL_DURATION = 'cordage.tool.duration'
