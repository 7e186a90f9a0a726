import xterm from '@xterm/headless'

const { Terminal } = xterm

/** Pending (unparsed) characters above which the pty is paused, and below which it resumes. */
const HIGH_WATER = 1 << 20
const LOW_WATER = 1 << 17
/** Rows a `waitFor` pattern is tested against at most (the newest ones). */
const MATCH_ROWS = 2000

// C0 and C1 controls (tab kept): an emulator cell never holds one, but a title or a stray cell must not
// carry an escape sequence to the model.
// oxlint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g

/** What a user would see on the terminal now. Rows and columns are 1-based. */
export interface ScreenView {
  lines: string[]
  cursor: { row: number; col: number }
  cols: number
  rows: number
  alternate: boolean
  title: string
}

/** Rows that scrolled off the top of the screen, addressed by absolute row numbers that only grow. */
export interface ScrollbackDelta {
  /** Absolute row of `lines[0]`. */
  from: number
  /** Pass as `since` to continue after the last returned row. */
  next: number
  /** Absolute row where the scrollback ends and the screen begins. */
  end: number
  lines: string[]
  /** Rows asked for that the scrollback no longer holds (dropped beyond its limit). */
  lost: number
  /** Rows held but left out to keep the result bounded. */
  omitted: number
}

/** Bounds on one scrollback delta. */
export interface DeltaLimits {
  maxLines: number
  maxBytes: number
}

interface TrimmableList {
  length: number
  onTrim(listener: (amount: number) => void): { dispose(): void }
}

/** Row text as the model gets it: no control characters, no trailing blanks (erasing often writes spaces). */
export function clean(text: string): string {
  return text.replace(CONTROLS, '').trimEnd()
}

/**
 * One session's headless terminal emulator: parses everything the program writes (escape sequences
 * included) into a screen and a bounded scrollback, counts rows trimmed off the scrollback so row numbers
 * stay absolute, and asks for back-pressure while parsing lags behind the program.
 */
export class Screen {
  private readonly term: InstanceType<typeof Terminal>
  private trimmed = 0
  private list: TrimmableList | undefined
  private listLength = 0
  private trimListener: { dispose(): void } | undefined
  private pending = 0
  private paused = false
  private readonly parsedListeners = new Set<() => void>()
  private readonly flushes = new Set<() => void>()
  title = ''
  /** `Date.now()` of the last parsed output. */
  lastOutputAt = 0
  /** What the screen showed when it was disposed: calls still in flight then read this. */
  private final: { view: ScreenView; end: number } | undefined

  constructor(
    cols: number,
    rows: number,
    scrollback: number,
    private readonly onPressure: (pause: boolean) => void,
  ) {
    this.term = new Terminal({ cols, rows, scrollback, allowProposedApi: true })
    this.term.onTitleChange((title) => (this.title = clean(title).trim().slice(0, 200)))
    this.track()
  }

  /** Feeds program output to the emulator. */
  write(data: string): void {
    if (this.final) return
    this.pending += data.length
    if (!this.paused && this.pending > HIGH_WATER) {
      this.paused = true
      this.onPressure(true)
    }
    this.term.write(data, () => {
      this.pending -= data.length
      this.lastOutputAt = Date.now()
      this.track()
      if (this.paused && this.pending < LOW_WATER) {
        this.paused = false
        this.onPressure(false)
      }
      for (const listener of this.parsedListeners) listener()
    })
  }

  /** Calls `listener` after each parsed chunk of output; returns the unsubscribe. */
  onParsed(listener: () => void): () => void {
    this.parsedListeners.add(listener)
    return () => void this.parsedListeners.delete(listener)
  }

  /** Resolves once everything written so far has been parsed. */
  flush(): Promise<void> {
    if (this.final) return Promise.resolve()
    return new Promise((resolve) => {
      this.flushes.add(resolve)
      this.term.write('', () => {
        this.flushes.delete(resolve)
        resolve()
      })
    })
  }

  /**
   * Follows the normal buffer's row list: counts trims, and after a full reset (RIS replaces the list)
   * continues numbering after the old rows. The list is internal to xterm 6.0 (pinned); without it rows
   * are numbered from the current scrollback only.
   */
  private track(): void {
    const list = (this.term as any)._core?._bufferService?.buffers?.normal?.lines as TrimmableList | undefined
    if (list !== this.list) {
      this.trimListener?.dispose()
      if (this.list) this.trimmed += this.listLength
      this.list = list
      this.trimListener = list?.onTrim((amount) => (this.trimmed += amount))
    }
    this.listLength = list?.length ?? 0
  }

  /** Absolute row of the cursor in the normal buffer: where output after now begins. */
  cursorRow(): number {
    const normal = this.term.buffer.normal
    return this.trimmed + normal.baseY + normal.cursorY
  }

  /** The visible screen, with blank rows below both the cursor and the last text left out. */
  view(): ScreenView {
    if (this.final) return this.final.view
    const buffer = this.term.buffer.active
    const lines: string[] = []
    for (let row = 0; row < this.term.rows; row++) lines.push(clean(buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? ''))
    let keep = lines.length
    while (keep > buffer.cursorY + 1 && lines[keep - 1] === '') keep--
    lines.length = keep
    return {
      lines,
      cursor: { row: buffer.cursorY + 1, col: buffer.cursorX + 1 },
      cols: this.term.cols,
      rows: this.term.rows,
      alternate: buffer.type === 'alternate',
      title: this.title,
    }
  }

  /**
   * Scrollback rows from absolute row `since` up to the screen, bounded: `head` keeps the first rows
   * (paging forward), `tail` the newest (what a send just produced).
   */
  delta(since: number, mode: 'head' | 'tail', limits: DeltaLimits): ScrollbackDelta {
    if (this.final) return { from: this.final.end, next: this.final.end, end: this.final.end, lines: [], lost: 0, omitted: 0 }
    const normal = this.term.buffer.normal
    const end = this.trimmed + normal.baseY
    const start = Math.min(Math.max(since, this.trimmed), end)
    const lost = Math.max(0, Math.min(this.trimmed, end) - since)
    const row = (absolute: number) => clean(normal.getLine(absolute - this.trimmed)?.translateToString(true) ?? '')
    const lines: string[] = []
    let bytes = 0
    const fits = (line: string) => lines.length < limits.maxLines && (bytes += Buffer.byteLength(line) + 1) <= limits.maxBytes
    if (mode === 'head') {
      for (let at = start; at < end; at++) {
        const line = row(at)
        if (!fits(line)) break
        lines.push(line)
      }
      return { from: start, next: start + lines.length, end, lines, lost, omitted: end - start - lines.length }
    }
    for (let at = end - 1; at >= start; at--) {
      const line = row(at)
      if (!fits(line)) break
      lines.push(line)
    }
    lines.reverse()
    return { from: end - lines.length, next: end, end, lines, lost, omitted: end - start - lines.length }
  }

  /** The visible rows by key (absolute row, or `-row` on the alternate screen), to tell later which changed. */
  rows(): Map<number, string> {
    const buffer = this.term.buffer.active
    const rows = new Map<number, string>()
    for (let row = 0; row < this.term.rows; row++)
      rows.set(this.key(buffer, buffer.baseY + row), clean(buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? ''))
    return rows
  }

  private key(buffer: { type: string; baseY: number }, index: number): number {
    return buffer.type === 'alternate' ? -(index - buffer.baseY + 1) : this.trimmed + index
  }

  /**
   * Whether `pattern` matches the rows from absolute row `since` on (what scrolled by and the screen below
   * it) plus the screen rows whose text differs from `before` (a program redrawing in place, a full-screen
   * one); without `before`, the whole screen.
   */
  matches(since: number, pattern: RegExp, before?: Map<number, string>): boolean {
    if (this.final) return false
    const buffer = this.term.buffer.active
    const bottom = buffer.baseY + this.term.rows
    const first = buffer.type === 'alternate' ? buffer.baseY : Math.max(Math.min(since - this.trimmed, buffer.baseY), bottom - MATCH_ROWS, 0)
    const rows: string[] = []
    for (let index = first; index < bottom; index++) {
      const text = clean(buffer.getLine(index)?.translateToString(true) ?? '')
      const key = this.key(buffer, index)
      if ((buffer.type === 'normal' && key >= since) || (before ? before.get(key) !== text : index >= buffer.baseY)) rows.push(text)
    }
    pattern.lastIndex = 0
    return pattern.test(rows.join('\n'))
  }

  dispose(): void {
    if (this.final) return
    this.final = { view: this.view(), end: this.trimmed + this.term.buffer.normal.baseY }
    for (const resolve of this.flushes) resolve()
    this.flushes.clear()
    this.parsedListeners.clear()
    this.trimListener?.dispose()
    this.term.dispose()
  }
}
