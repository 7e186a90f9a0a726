import { ByteCapture } from '@cordage/process'
import { errorMessage } from '@cordage/core'
import type { SpillService, SpillWriter } from '@cordage/services'

/** Bytes waiting for the disk above which the stream is paused, and below which it resumes. */
const HIGH_WATER = 4 << 20
const LOW_WATER = 1 << 20

/** Where one stream's complete output went, once the capture had to leave some out. */
export interface StreamFile {
  /** Absolute path of the file, or null when none could be kept (no spill service, or it failed). */
  path: string | null
  /** Bytes in the file (at most `maxSpillBytes`). */
  bytes: number
  /** Why there is no file, or why it stops short of the whole stream (null when it holds it all). */
  note: string | null
}

/** What a recorder needs. */
export interface RecorderOptions {
  stream: 'stdout' | 'stderr'
  headBytes: number
  tailBytes: number
  /** Most bytes kept in the file; the rest of the stream is only counted. */
  maxSpillBytes: number
  spill: SpillService | undefined
  toolName: string
  callId: string
  warn(message: string): void
}

/**
 * One stream of a command: a bounded head/tail capture for the value and, from the moment the capture
 * first has to leave bytes out, a spill file that receives the whole stream (what the capture held, then
 * every chunk). When the disk falls behind, `push` returns a promise the caller waits on before reading
 * more, so memory stays bounded. A spill failure keeps the capture and says why (spill fails open).
 */
export class StreamRecorder {
  readonly capture: ByteCapture
  private writer: Promise<SpillWriter | undefined> | undefined
  /** Settles after the last write handed to the file. */
  private written: Promise<void> = Promise.resolve()
  private pending = 0
  private spilled = 0
  private failure: string | undefined
  private drain: { resolve(): void; promise: Promise<void> } | undefined

  constructor(private readonly options: RecorderOptions) {
    this.capture = new ByteCapture(options.headBytes, options.tailBytes)
  }

  /** Records a chunk; a returned promise means: read no more until it settles. */
  push(chunk: Buffer): Promise<void> | undefined {
    const capture = this.capture
    if (!this.writer && capture.end + chunk.length > capture.headLimit + capture.tailLimit) {
      this.writer = this.open()
      this.append(capture.complete() ?? Buffer.alloc(0))
    }
    capture.push(chunk)
    if (this.writer) this.append(chunk)
    if (this.pending <= HIGH_WATER) return undefined
    if (!this.drain) {
      let resolve!: () => void
      const promise = new Promise<void>((done) => (resolve = done))
      this.drain = { resolve, promise }
    }
    return this.drain.promise
  }

  /** Closes the file once everything was written; undefined when the capture left nothing out. */
  async finish(): Promise<StreamFile | undefined> {
    if (!this.writer) return undefined
    const writer = await this.writer
    await this.written
    if (!writer) return { path: null, bytes: 0, note: this.failure ?? null }
    let bytes = this.spilled
    try {
      bytes = (await writer.close()).bytes
    } catch (error) {
      this.fail(error)
    }
    const total = this.capture.end
    const note = this.failure ?? (bytes < total ? `the first ${bytes} of ${total} bytes` : null)
    return { path: writer.path, bytes, note }
  }

  private async open(): Promise<SpillWriter | undefined> {
    const spill = this.options.spill
    if (!spill?.open) {
      this.failure = spill ? 'the spill service cannot stream files' : 'not kept: the spill plugin is not loaded'
      return undefined
    }
    try {
      return await spill.open({ toolName: this.options.toolName, callId: this.options.callId, suggestedName: `${this.options.stream}.txt` })
    } catch (error) {
      this.fail(error)
      return undefined
    }
  }

  private append(chunk: Buffer): void {
    const room = this.options.maxSpillBytes - this.spilled
    if (this.failure || room <= 0 || !chunk.length) return
    const piece = chunk.length > room ? chunk.subarray(0, room) : chunk
    this.spilled += piece.length
    this.pending += piece.length
    this.written = this.writer!.then(async (writer) => {
      try {
        if (writer && !this.failure) await writer.write(piece)
      } catch (error) {
        this.fail(error)
      } finally {
        this.pending -= piece.length
        if (this.drain && this.pending <= LOW_WATER) {
          this.drain.resolve()
          this.drain = undefined
        }
      }
    })
  }

  private fail(error: unknown): void {
    if (this.failure) return
    this.failure = `writing it failed: ${errorMessage(error)}`
    this.options.warn(
      `bash ${this.options.callId}: could not keep the whole ${this.options.stream} in a spill file (${errorMessage(error)}); the value keeps its head and tail`,
    )
  }
}
