export type { LogRecord, TestContext, TestContextOptions } from './context.js'
export { createTestContext } from './context.js'
export type { ContractCase, ContractOptions } from './contract.js'
export { testToolContract } from './contract.js'
