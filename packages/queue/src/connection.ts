import { Redis } from 'ioredis'

/**
 * A Redis connection as BullMQ needs it: `maxRetriesPerRequest: null` (its blocking commands wait for
 * Redis to come back instead of failing), and no offline queue limit surprises for the control channel.
 */
export function connect(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false })
}
