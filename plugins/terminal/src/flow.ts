/** Unparsed bytes above which the pty is paused, and below which it resumes. */
const HIGH_WATER = 1 << 20
const LOW_WATER = 1 << 17

/** How much unread output a session takes before its program is made to wait. */
export interface UnreadLimits {
  /** Rows: more would start trimming rows nobody has seen. */
  rows: number
  /** Bytes: bounds programs that redraw in place (`\r`, full-screen) and so add no rows. */
  bytes: number
}

/**
 * When a session stops reading its pty, and when it reads again. Reading pauses while the emulator lags
 * far behind a flooding program, and while nobody is looking once the unread output fills the buffer:
 * an unread `yes` then blocks on its write instead of keeping a core busy forever. A read, or a send
 * waiting for output, resumes it. Pausing only stops reading: the program blocks, nothing is lost (the
 * screen holds back what was already read past the limit until then).
 */
export class FlowControl {
  private unparsed = 0
  private unreadBytes = 0
  private watchers = 0
  private lagging = false
  private full = false
  private paused = false

  constructor(
    private readonly limits: UnreadLimits,
    private readonly onPressure: (pause: boolean) => void,
  ) {}

  /** Bytes handed to the emulator and not parsed yet. */
  get pending(): number {
    return this.unparsed
  }

  /** Whether the pty is paused now. */
  get isPaused(): boolean {
    return this.paused
  }

  /** `length` bytes were handed to the emulator. */
  queued(length: number): void {
    this.unparsed += length
    if (!this.lagging && this.unparsed > HIGH_WATER) {
      this.lagging = true
      this.update()
    }
  }

  /** `length` bytes were parsed; `unreadRows` rows have arrived since the last read. */
  parsed(length: number, unreadRows: number): void {
    this.unparsed -= length
    this.unreadBytes += length
    if (this.lagging && this.unparsed < LOW_WATER) this.lagging = false
    if (!this.watchers && (unreadRows >= this.limits.rows || this.unreadBytes >= this.limits.bytes)) this.full = true
    this.update()
  }

  /** Rows that may still be parsed before the buffer is full of unread rows (unbounded while watched). */
  room(unreadRows: number): number {
    return this.watchers ? Number.POSITIVE_INFINITY : this.limits.rows - unreadRows
  }

  /** Output was held back because unread rows fill the buffer: pause until a read. */
  hold(): void {
    this.full = true
    this.update()
  }

  /** Everything so far counts as read: reading resumes. */
  read(): void {
    this.unreadBytes = 0
    this.full = false
    this.update()
  }

  /** Someone waits for output (a send): reading continues until the returned `done` is called. */
  watch(): () => void {
    this.watchers++
    this.full = false
    this.update()
    let done = false
    return () => {
      if (done) return
      done = true
      this.watchers--
    }
  }

  private update(): void {
    const pause = this.lagging || this.full
    if (pause === this.paused) return
    this.paused = pause
    this.onPressure(pause)
  }
}
