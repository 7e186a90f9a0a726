import { Redis } from 'ioredis'

/**
 * A Redis connection as BullMQ needs it: `maxRetriesPerRequest: null` (its blocking commands wait for
 * Redis to come back instead of failing), and no offline queue limit surprises for the control channel.
 * Named `cordage:<queue>:<role>` (`CLIENT LIST` shows who holds which connection).
 */
export function connect(url: string, queue: string, role: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, connectionName: `cordage:${queue}:${role}` })
}
