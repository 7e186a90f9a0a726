import type { ModelEvent } from '@cordage/services'

/** Reads a model stream to its end and returns its events. */
export async function collectEvents(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const events: ModelEvent[] = []
  for await (const event of stream) events.push(event)
  return events
}

/** The error a model stream ends with; throws when it ends without one. */
export async function streamFailure(stream: AsyncIterable<ModelEvent>): Promise<any> {
  try {
    await collectEvents(stream)
  } catch (error) {
    return error
  }
  throw new Error('expected the stream to fail')
}
