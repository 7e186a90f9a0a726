export type { LogRecord, TestContext, TestContextOptions } from './context.js'
export { createTestContext } from './context.js'
export type { ContractCase, ContractOptions } from './contract.js'
export { testToolContract } from './contract.js'
export {
  startFakeOpenAI,
  type FakeFault,
  type FakeHttpError,
  type FakeOpenAIOptions,
  type FakeOpenAIRequest,
  type FakeOpenAIServer,
  type FakeReply,
  type FakeToolCall,
  type FakeTurn,
} from './fake-openai.js'
export {
  startFakeAnthropic,
  type FakeAnthropicHttpError,
  type FakeAnthropicOptions,
  type FakeAnthropicReply,
  type FakeAnthropicRequest,
  type FakeAnthropicServer,
  type FakeAnthropicTurn,
} from './fake-anthropic.js'
export type { BenchVariant, CompareOptions, Comparison } from './bench.js'
export { compare } from './bench.js'
export type { RecordedRequest, ScriptStep, ScriptedCall, ScriptedModelConfig, ScriptedTurn } from './scripted-model.js'
export { ScriptedModel, ScriptExhaustedError } from './scripted-model.js'
export { killAfterEach, openFilesUnder, processAlive } from './processes.js'
export { credentialSamples, exportSamples, harmlessSamples } from './credentials.js'
export { codeOf, textOf, valueOf } from './results.js'
export { collectEvents, streamFailure } from './model-stream.js'
export { testSessionStore, sessionHeader, sessionEvents, type SessionStoreFixture } from './session-store.js'
