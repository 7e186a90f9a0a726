/** The largest message a server may send: the SDK's limit for a stdio line, kept for HTTP. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024

/** Statuses a `Response` cannot be built with a body for. */
const NULL_BODY = new Set([101, 103, 204, 205, 304])

/**
 * A `fetch` for the SDK's Streamable HTTP transport whose response bodies fail once one message passes
 * `max` bytes: an SSE event (its bytes since the last blank line) or a whole JSON body. The SDK buffers
 * either without bound, so a server could fill the memory of the process; `onOversize` hears about it
 * (the connection then drops it, as the SDK's stdio transport does with an oversized line).
 */
export function limitedFetch(onOversize: (bytes: number) => void, max = MAX_MESSAGE_BYTES): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init)
    // Redirects are left as they came: the SDK follows them by their type and URL, which a copy would lose.
    if (!response.body || NULL_BODY.has(response.status) || (response.status >= 300 && response.status < 400)) return response
    const sse = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream')
    const body = response.body.pipeThrough(messageLimit(sse, max, onOversize))
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

/** Counts the bytes of the message being received (see `limitedFetch`) and fails the body past `max`. */
function messageLimit(sse: boolean, max: number, onOversize: (bytes: number) => void): TransformStream<Uint8Array, Uint8Array> {
  let message = 0
  let line = 0
  let afterCr = false
  return new TransformStream({
    transform(chunk, controller) {
      let peak = 0
      if (!sse) peak = message += chunk.length
      // SSE lines end with CRLF, LF or CR; an empty line ends the event.
      else
        for (let index = 0; index < chunk.length; index++) {
          const byte = chunk[index]!
          if (byte !== 10 && byte !== 13) {
            line++
            if (++message > peak) peak = message
          } else if (!(byte === 10 && afterCr)) {
            if (line === 0) message = 0
            line = 0
          }
          afterCr = byte === 13
        }
      if (peak <= max) return controller.enqueue(chunk)
      onOversize(peak)
      controller.error(new Error(`MCP_FRAME_TOO_LARGE: a message over ${max} bytes`))
    },
  })
}
