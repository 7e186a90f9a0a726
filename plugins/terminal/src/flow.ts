/** Unparsed characters above which the pty is paused, and below which it resumes. */
const HIGH_WATER = 1 << 20
const LOW_WATER = 1 << 17

/** How much unread output a session takes before its program is made to wait. */
export interface UnreadLimits {
  /** Rows: more would start trimming rows nobody has seen. */
  rows: number
  /** Characters: bounds programs that redraw in place (`\r`, full-screen) and so add no rows. */
  chars: number
}

/**
 * When a session stops reading its pty, and when it reads again. Reading pauses while the emulator lags
 * far behind a flooding program, and while nobody is looking once the unread output fills the buffer:
 * an unread `yes` then blocks on its write instead of keeping a core busy forever. A read, or a send
 * waiting for output, resumes it. Pausing only stops reading: the program blocks, nothing is lost (the
 * screen holds back what was already read past the limit until then).
 */
export class FlowControl {
  private pending = 0
  private unreadChars = 0
  private watchers = 0
  private lagging = false
  private full = false
  private paused = false

  constructor(
    private readonly limits: UnreadLimits,
    private readonly onPressure: (pause: boolean) => void,
  ) {}

  /** Whether the pty is paused now. */
  get isPaused(): boolean {
    return this.paused
  }

  /** `length` characters were handed to the emulator. */
  queued(length: number): void {
    this.pending += length
    if (!this.lagging && this.pending > HIGH_WATER) {
      this.lagging = true
      this.update()
    }
  }

  /** `length` characters were parsed; `unreadRows` rows have arrived since the last read. */
  parsed(length: number, unreadRows: number): void {
    this.pending -= length
    this.unreadChars += length
    if (this.lagging && this.pending < LOW_WATER) this.lagging = false
    if (!this.watchers && (unreadRows >= this.limits.rows || this.unreadChars >= this.limits.chars)) this.full = true
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
    this.unreadChars = 0
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
