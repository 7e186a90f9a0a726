export type { JsonValue, JsonObject, ToJsonOptions } from './json.js'
export { toJsonValue, deepFreeze, isJsonObject } from './json.js'
export type { ContentBlock, HookContext, ToolExecutionResult, ToolSuccess, ToolErrorResult, ToolFailure } from './content.js'
export { text, contentText } from './content.js'
export { failure, errorMessage, freezeResult } from './failure.js'
export type { JsonSchemaNode, JsonSchema, JsonSchemaType } from './schema.js'
export { assertSupportedSchema, checkSupportedSchema, nestSchema, SUPPORTED_FORMATS } from './schema.js'
export type { Validator } from './validator.js'
export { compileValidator } from './validator.js'
export type { ValueSchemaSpec, Infer } from './schemastery.js'
export { toJsonSchema, isSchemastery } from './schemastery.js'
export type {
  ToolDefinition,
  ToolOutput,
  ToolSpec,
  ToolExec,
  ToolRunContext,
  ToolExecutionToken,
  ToolConcurrency,
  ToolPathArgument,
  ToolAnnotations,
  ReturnsOutput,
} from './tool.js'
export { defineTool, TOOL_NAME_PATTERN, TOOL_ANNOTATION_KEYS } from './tool.js'
export type { ConfigInput, ConfigIssue, KeyShape, StandardConfig } from './config.js'
export { ConfigError, strictConfig, unknownConfigKeys } from './config.js'
export type { Violation } from './errors.js'
export {
  CordageError,
  ToolArgsError,
  ToolOutputError,
  UnknownToolError,
  ToolDeniedError,
  ToolAbortedError,
  ToolAbortedBeforeDispatchError,
  ToolTimeoutError,
  UnsupportedSchemaError,
  NotJsonError,
  ToolDefinitionError,
  formatViolations,
} from './errors.js'
export type { EnvPolicy } from './env.js'
export { DEFAULT_ENV_DENY, envFilter, envPolicySchema } from './env.js'
