// @ts-check
// The conversion worker: converts one response body at a time and reports its heap, so the host can
// stop it at its time budget (terminate) and replace it when a page left its heap large. Runs under
// `resourceLimits`: a page that needs more memory ends this thread, never the host.
// Plain JavaScript so Node runs it from src/ and dist/ alike.
import { getHeapStatistics } from 'node:v8'
import { parentPort } from 'node:worker_threads'
import { convertBody } from './convert.js'

/**
 * A body to convert, its bytes transferred from the host.
 * @typedef {{ body: ArrayBuffer, contentType: string, options: import('./convert.js').ConvertOptions }} ConversionRequest
 */
/**
 * `ready` once the converters are loaded; then per request the converted body, or a failure with its
 * code, and `heapBytes`, this thread's heap afterwards.
 * @typedef {{ type: 'ready' }
 *   | { type: 'done', ok: true, converted: import('./convert.js').Converted, heapBytes: number }
 *   | { type: 'done', ok: false, code: string, message: string, heapBytes: number }} ConversionReply
 */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)

port.on('message', (/** @type {ConversionRequest} */ request) => {
  /** @type {ConversionReply} */
  let reply
  try {
    const converted = convertBody(Buffer.from(request.body), request.contentType, request.options)
    reply = { type: 'done', ok: true, converted, heapBytes: 0 }
  } catch (error) {
    const failure = /** @type {{ code?: unknown, message?: unknown }} */ (error)
    const code = typeof failure?.code === 'string' ? failure.code : 'WEB_CONVERSION_FAILED'
    reply = { type: 'done', ok: false, code, message: String(failure?.message ?? error), heapBytes: 0 }
  }
  reply.heapBytes = getHeapStatistics().total_heap_size
  port.postMessage(reply)
})
port.postMessage(/** @type {ConversionReply} */ ({ type: 'ready' }))
