import process from 'node:process'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** The SDK's stdio frame limit, kept: larger frames are answered with an error instead of closing the transport. */
export const MAX_FRAME_BYTES = 10 * 1024 * 1024

/** How much of an oversized frame's start and end is kept to find its request id. */
const EDGE_BYTES = 4096

/** What the transport reports about a frame it refused. */
export interface OversizeFrame {
  bytes: number
  id: string | number | null
}

/** Options of {@link LineTransport}. */
export interface LineTransportOptions {
  maxFrameBytes?: number
  /** Called for each refused frame (after the error answer is sent). */
  onOversize?(frame: OversizeFrame): void
}

const LEADING_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/
const TRAILING_ID = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/

/** The request id of a refused frame, read from its first or last key (where JSON-RPC writers put it). */
export function frameId(head: string, tail: string): string | number | null {
  const match = LEADING_ID.exec(head) ?? TRAILING_ID.exec(tail.replace(/\r$/, ''))
  if (!match) return null
  try {
    return JSON.parse(match[1]!) as string | number
  } catch {
    return null
  }
}

/**
 * Newline-delimited JSON-RPC over stdin/stdout, like the SDK's `StdioServerTransport`, except for frames
 * over `maxFrameBytes`: the SDK closes the transport and stops reading (the process then ends with
 * nothing left to do, exit code 13). Here such a frame is skipped without being buffered, answered with
 * an InvalidRequest error for its id, reported, and reading goes on.
 */
export class LineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private readonly maxFrameBytes: number
  private chunks: Buffer[] = []
  private size = 0
  /** Set while skipping an oversized frame: its size so far and its first and last bytes. */
  private skipping: { bytes: number; head: Buffer; tail: Buffer } | undefined

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly options: LineTransportOptions = {},
  ) {
    this.maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.ondata)
    this.stdin.on('error', this.onStreamError)
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.ondata)
    this.stdin.off('error', this.onStreamError)
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause()
    this.chunks = []
    this.skipping = undefined
    this.onclose?.()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(JSON.stringify(message) + '\n')) resolve()
      else this.stdout.once('drain', resolve)
    })
  }

  private readonly onStreamError = (error: Error) => this.onerror?.(error)

  private readonly ondata = (data: Buffer | string) => {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data
    for (let start = 0; start < chunk.length;) {
      const newline = chunk.indexOf(10, start)
      const end = newline === -1 ? chunk.length : newline
      if (end > start) {
        const part = chunk.subarray(start, end)
        if (this.skipping || this.size + part.length > this.maxFrameBytes) this.skip(part)
        else {
          this.chunks.push(part)
          this.size += part.length
        }
      }
      start = end + 1
      if (newline !== -1) this.endFrame()
    }
  }

  /** Keeps only the edges of an oversized frame (the buffered start included) and counts its bytes. */
  private skip(part: Buffer): void {
    if (!this.skipping) {
      const start = Buffer.concat(this.chunks)
      this.skipping = { bytes: start.length, head: Buffer.from(start.subarray(0, EDGE_BYTES)), tail: Buffer.alloc(0) }
      this.chunks = []
      this.size = 0
      if (this.skipping.head.length < EDGE_BYTES)
        this.skipping.head = Buffer.concat([this.skipping.head, part.subarray(0, EDGE_BYTES - this.skipping.head.length)])
    }
    const skipping = this.skipping
    skipping.bytes += part.length
    skipping.tail =
      part.length >= EDGE_BYTES ? Buffer.from(part.subarray(part.length - EDGE_BYTES)) : Buffer.concat([skipping.tail, part]).subarray(-EDGE_BYTES)
  }

  private endFrame(): void {
    if (this.skipping) {
      const { bytes, head, tail } = this.skipping
      this.skipping = undefined
      const id = frameId(head.toString('utf8'), tail.toString('utf8'))
      void this.send({
        jsonrpc: '2.0',
        id: id as string | number,
        error: {
          code: ErrorCode.InvalidRequest,
          message: `MCP_FRAME_TOO_LARGE: the message is ${bytes} bytes, over this server's ${this.maxFrameBytes}-byte limit; send smaller arguments (for large data, pass a file path)`,
        },
      } as JSONRPCMessage)
      this.options.onOversize?.({ bytes, id })
      return
    }
    if (this.size === 0) return
    const frame = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size)
    this.chunks.length = 0
    this.size = 0
    const line = frame.toString('utf8').replace(/\r$/, '')
    let message: JSONRPCMessage
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line))
    } catch (error) {
      this.onerror?.(error as Error)
      return
    }
    this.onmessage?.(message)
  }
}
