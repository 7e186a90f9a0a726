import { QueueError } from './errors.js'

/** What a queued run carries: everything a worker on another machine needs to run it. */
export interface RunJobData {
  /** The run's id, which is its session id (and the BullMQ job id). */
  id: string
  /** The task. */
  prompt: string
  /** Agent options of this run. */
  options?: { maxTurns?: number; system?: string }
  /** The text of the `cordage.yml` the run uses (plugins, model, agent); absent: the worker's own. */
  config?: string
  /** A recorded-model file the worker replays instead of calling a provider. */
  cassette?: string
  /** The enqueuer's trace context (W3C `traceparent`/`tracestate`), so its trace continues in the worker. */
  trace?: Record<string, string>
  /** `Date.now()` at enqueue. */
  enqueuedAt: number
  /** Set on a run resumed after its user answered: which wait it resumes (the `session/waiting` event's seq). */
  resumes?: number
  /** The worker that took the run last, stamped by a worker with an `identity` when it takes it. */
  owner?: WorkerIdentity
}

/**
 * A worker process, as the next worker to take its runs sees it: enough to tell, on the same machine,
 * whether it is still alive, and to end what it left behind if it is not.
 */
export interface WorkerIdentity {
  /** `os.hostname()` of its machine. */
  host: string
  pid: number
  /** Its start time (clock ticks after boot, as `/proc/<pid>/stat` gives it): a reused pid is another process. 0: unknown. */
  start: number
  /** The process-tree token every process it started carries (`CORDAGE_PROCESS_TREE`, `@cordage/process`). */
  token: string
}

/** Whether `value` has the shape of a {@link WorkerIdentity} (job data can be hand-written or from another version). */
export function isWorkerIdentity(value: unknown): value is WorkerIdentity {
  const owner = value as WorkerIdentity
  return (
    typeof owner === 'object' &&
    owner !== null &&
    typeof owner.host === 'string' &&
    Number.isInteger(owner.pid) &&
    owner.pid > 0 &&
    Number.isInteger(owner.start) &&
    owner.start >= 0 &&
    typeof owner.token === 'string' &&
    /^[\w.-]{1,128}$/.test(owner.token)
  )
}

/** `queue:` of cordage.yml. */
export interface QueueSettings {
  /** `redis://host:port[/db]`. */
  redis: string
  /** The BullMQ queue name (default `cordage-runs`); enqueuers and workers must agree. */
  name?: string
  /** How many times a run may be started before a run that keeps killing its workers is failed (default 3). */
  attempts?: number
  /** How long a worker's lock on a run lasts without renewal, in ms (default 30 000; renewed at half). */
  lockDuration?: number
  /** How often workers look for runs whose worker died, in ms (default 30 000). */
  stalledInterval?: number
}

/** Settings with every default applied. */
export type ResolvedQueueSettings = Required<QueueSettings>

const NAME = /^[\w.-]{1,64}$/

function fail(key: string, expected: string, value: unknown): never {
  throw new QueueError('INVALID_QUEUE_CONFIG', `queue: ${key}: expected ${expected} but got ${JSON.stringify(value)}`)
}

/** Applies the defaults and checks the values; `INVALID_QUEUE_CONFIG` names the key. */
export function resolveQueueSettings(settings: QueueSettings): ResolvedQueueSettings {
  if (typeof settings?.redis !== 'string' || !/^rediss?:\/\//.test(settings.redis)) fail('redis', 'a redis:// or rediss:// url', settings?.redis)
  const name = settings.name ?? 'cordage-runs'
  if (typeof name !== 'string' || !NAME.test(name)) fail('name', "1-64 letters, digits, '.', '_' or '-'", name)
  const positive = (key: 'attempts' | 'lockDuration' | 'stalledInterval', fallback: number): number => {
    const value = settings[key] ?? fallback
    if (!Number.isInteger(value) || value <= 0) fail(key, 'a positive integer', value)
    return value
  }
  return {
    redis: settings.redis,
    name,
    attempts: positive('attempts', 3),
    lockDuration: positive('lockDuration', 30_000),
    stalledInterval: positive('stalledInterval', 30_000),
  }
}

const RUN_ID = /^[\w.-]{1,128}$/

/**
 * Throws `INVALID_RUN` unless `id` is a session id BullMQ accepts as a job id (no `:`, not all digits) and
 * not the job id of another run's resume (`<run>.resume-<wait>`, which adding it would turn into a no-op).
 */
export function assertRunId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !RUN_ID.test(id) || /^\d+$/.test(id) || id === '.' || id === '..' || /\.resume-\d+$/.test(id))
    throw new QueueError(
      'INVALID_RUN',
      `invalid run id ${JSON.stringify(id)}: use 1-128 letters, digits, '.', '_' and '-', not digits only nor ending in .resume-<n>`,
    )
}

/** Checks a job's data as a worker receives it (a job written by another version or by hand). */
export function assertRunJobData(data: unknown): asserts data is RunJobData {
  const value = data as RunJobData
  if (!value || typeof value !== 'object') throw new QueueError('INVALID_RUN', 'a queued run must be an object')
  assertRunId(value.id)
  if (typeof value.prompt !== 'string') throw new QueueError('INVALID_RUN', `run ${value.id}: prompt: expected a string`)
  if (value.config !== undefined && typeof value.config !== 'string')
    throw new QueueError('INVALID_RUN', `run ${value.id}: config: expected the cordage.yml text`)
  if (value.cassette !== undefined && typeof value.cassette !== 'string') throw new QueueError('INVALID_RUN', `run ${value.id}: cassette: expected a path`)
  const options = value.options
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new QueueError('INVALID_RUN', `run ${value.id}: options: expected an object`)
  if (options?.maxTurns !== undefined && !(Number.isInteger(options.maxTurns) && options.maxTurns > 0))
    throw new QueueError('INVALID_RUN', `run ${value.id}: options.maxTurns: expected a positive integer`)
  if (options?.system !== undefined && typeof options.system !== 'string')
    throw new QueueError('INVALID_RUN', `run ${value.id}: options.system: expected a string`)
  if (value.resumes !== undefined && !(Number.isInteger(value.resumes) && value.resumes > 0))
    throw new QueueError('INVALID_RUN', `run ${value.id}: resumes: expected the seq of the wait it resumes`)
}

/** Redis keys and channels of one queue, beside BullMQ's own. */
export function keysOf(name: string): { control: string; cancelled: (id: string) => string; kept: (id: string) => string } {
  return {
    control: `cordage:${name}:control`,
    cancelled: (id) => `cordage:${name}:cancelled:${id}`,
    // A run waiting for its user: its job data, kept (without expiry) until it is resumed to its end or cancelled.
    kept: (id) => `cordage:${name}:kept:${id}`,
  }
}
