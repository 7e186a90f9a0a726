export { QueueError } from './errors.js'
export { RunQueue, type RunRequest, type RunState } from './queue.js'
export { RunWorker, type RunContext, type RunWorkerOptions } from './worker.js'
export {
  assertRunId,
  isWorkerIdentity,
  resolveQueueSettings,
  type QueueSettings,
  type ResolvedQueueSettings,
  type RunJobData,
  type WorkerIdentity,
} from './types.js'
export { injectTrace, withEnqueueSpan, withTrace } from './trace.js'
