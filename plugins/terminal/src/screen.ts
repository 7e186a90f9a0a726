import xterm from '@xterm/headless'
import { FlowControl } from './flow.js'
import { boundedTest } from './pattern.js'

const { Terminal } = xterm

/** Rows a `waitFor` pattern is tested against at most (the newest ones). */
const MATCH_ROWS = 2000
/** Bytes that may arrive unread (and add no rows) before the program is made to wait. */
const UNREAD_BYTES = 8 << 20
const NEWLINE = 0x0a
/** Emulator complaints (malformed escape sequences) logged per session; the rest are counted. */
const LOGGED_COMPLAINTS = 5

// C0 and C1 controls (tab kept): an emulator cell never holds one, but a title or a stray cell must not
// carry an escape sequence to the model.
// oxlint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g
// oxlint-disable-next-line no-control-regex
const HAS_CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/

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

/** What a screen needs besides its size. */
export interface ScreenOptions {
  cols: number
  rows: number
  scrollback: number
  /** Pause (true) or resume (false) reading the program's output. */
  onPressure(pause: boolean): void
  /** The host's debug log, for the emulator's complaints about malformed output. */
  log(message: string): void
}

/** Bounds on one scrollback delta. */
export interface DeltaLimits {
  maxLines: number
  maxBytes: number
}

function quiet(): void {}

function countNewlines(data: Uint8Array): number {
  let count = 0
  for (let at = data.indexOf(NEWLINE); at >= 0; at = data.indexOf(NEWLINE, at + 1)) count++
  return count
}

/** The position just after the `count`-th newline of `data` (0 for none), or its length when it has fewer. */
function afterNewlines(data: Uint8Array, count: number): number {
  let at = 0
  for (let seen = 0; seen < count; seen++) {
    const next = data.indexOf(NEWLINE, at)
    if (next < 0) return data.length
    at = next + 1
  }
  return at
}

interface TrimmableList {
  length: number
  onTrim(listener: (amount: number) => void): { dispose(): void }
}

/** Row text as the model gets it: no control characters, no trailing blanks (erasing often writes spaces). */
export function clean(text: string): string {
  // Testing first is cheaper than a replace that finds nothing, which is every row but a rare few.
  return (HAS_CONTROL.test(text) ? text.replace(CONTROLS, '') : text).trimEnd()
}

/**
 * One session's headless terminal emulator: parses everything the program writes (escape sequences
 * included) into a screen and a bounded scrollback, counts rows trimmed off the scrollback so row numbers
 * stay absolute, and asks for back-pressure while parsing lags behind the program or unread output has
 * filled the buffer (see {@link FlowControl}).
 */
export class Screen {
  private readonly term: InstanceType<typeof Terminal>
  private trimmed = 0
  private list: TrimmableList | undefined
  private listLength = 0
  private trimListener: { dispose(): void } | undefined
  private readonly flow: FlowControl
  /** Absolute row of the cursor at the last read: rows after it are unread. */
  private readFrom = 0
  /** Rows (newlines) handed to the emulator and not parsed yet. */
  private queuedRows = 0
  /** Output already read from the pty that would overflow the unread buffer, kept until a read. */
  private held: Buffer[] = []
  private complaints = 0
  private readonly parsedListeners = new Set<() => void>()
  private readonly flushes = new Set<() => void>()
  title = ''
  /** `Date.now()` of the last parsed output. */
  lastOutputAt = 0
  /** What the screen showed when it was disposed: calls still in flight then read this. */
  private final: { view: ScreenView; end: number } | undefined

  constructor(private readonly options: ScreenOptions) {
    const { cols, rows, scrollback } = options
    // Malformed output (random bytes) makes xterm complain once per bad sequence: to the host's debug
    // log, a few per session, never to the console, which is the user's screen under `cordage run`.
    const complain = (message: string, ...details: unknown[]) => this.complain(message, details)
    const logger = { trace: quiet, debug: quiet, info: quiet, warn: complain, error: complain }
    this.term = new Terminal({ cols, rows, scrollback, allowProposedApi: true, logLevel: 'warn', logger })
    this.term.onTitleChange((title) => (this.title = clean(title).trim().slice(0, 200)))
    // A scrollback's worth of unread rows keeps the oldest unread one in the buffer (wrapped lines,
    // which the newline count misses, are absorbed by the screen rows below it).
    this.flow = new FlowControl({ rows: scrollback || rows, bytes: UNREAD_BYTES }, options.onPressure)
    this.track()
  }

  /** Feeds program output to the emulator, holding back rows that would push unread ones out. */
  write(data: Buffer): void {
    if (this.final) return
    if (this.held.length) {
      this.held.push(data)
      return
    }
    const room = this.flow.room(this.cursorRow() - this.readFrom + this.queuedRows)
    let fed = data
    if (room < Number.POSITIVE_INFINITY) {
      const cut = afterNewlines(data, Math.max(0, room))
      if (cut < data.length) {
        this.held.push(data.subarray(cut))
        fed = data.subarray(0, cut)
        this.flow.hold()
      }
    }
    if (fed.length) this.feed(fed)
  }

  private feed(data: Buffer): void {
    const rows = countNewlines(data)
    this.queuedRows += rows
    // With nothing queued, xterm parses a write that follows user input at once instead of on its next
    // timer tick (at least a millisecond in Node): marking every such write as following input makes a
    // prompt's output readable as soon as it arrives. A flood still queues, and xterm slices its parsing.
    if (!this.flow.pending) this.term.input('', true)
    this.flow.queued(data.length)
    this.term.write(data, () => {
      this.queuedRows -= rows
      this.lastOutputAt = Date.now()
      this.track()
      this.flow.parsed(data.length, this.final ? 0 : this.cursorRow() - this.readFrom)
      for (const listener of this.parsedListeners) listener()
    })
  }

  /** Feeds what was held back (after a read, or when a send starts waiting). */
  private release(): void {
    if (!this.held.length) return
    const held = Buffer.concat(this.held)
    this.held = []
    this.write(held)
  }

  /** Whether reading the program's output is paused now (back-pressure or unread output). */
  get paused(): boolean {
    return this.flow.isPaused
  }

  /**
   * A caller has seen the output up to absolute row `row` (default: all of it): unread output counts
   * from there, and paused reading resumes until the buffer is full of unread rows again.
   */
  markRead(row = Number.MAX_SAFE_INTEGER): void {
    if (this.final) return
    this.readFrom = Math.min(row, this.cursorRow())
    this.flow.read()
    this.release()
  }

  /** A caller waits for output: reading continues until the returned function is called. */
  watch(): () => void {
    const done = this.flow.watch()
    this.release()
    return done
  }

  private complain(message: string, details: unknown[]): void {
    this.complaints++
    if (this.complaints > LOGGED_COMPLAINTS) return
    const detail = details.map((item) => (typeof item === 'string' ? item : (JSON.stringify(item) ?? String(item)))).join(' ')
    const suffix = this.complaints === LOGGED_COMPLAINTS ? ' (further complaints of this session are counted, not logged)' : ''
    this.options.log(`terminal emulator: ${message}${detail.slice(0, 200)}${suffix}`)
  }

  /** Calls `listener` after each parsed chunk of output; returns the unsubscribe. */
  onParsed(listener: () => void): () => void {
    this.parsedListeners.add(listener)
    return () => void this.parsedListeners.delete(listener)
  }

  /** Resolves once everything written so far has been parsed. */
  flush(): Promise<void> {
    if (this.final || !this.flow.pending) return Promise.resolve()
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

  /** Absolute row where the normal buffer's scrollback ends (rows above it no longer change). */
  scrollbackEnd(): number {
    return this.final ? this.final.end : this.trimmed + this.term.buffer.normal.baseY
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
   * one); without `before`, the whole screen. With `from` (absolute), rows above it are left out: a
   * caller testing again during a flood passes the rows it already tested, which sit in the scrollback and
   * no longer change, keeping some overlap for patterns that span rows. A test that runs past its budget
   * throws `PatternTimeoutError`.
   */
  matches(since: number, pattern: RegExp, before?: Map<number, string>, from = 0): boolean {
    if (this.final) return false
    const buffer = this.term.buffer.active
    const bottom = buffer.baseY + this.term.rows
    const first =
      buffer.type === 'alternate'
        ? buffer.baseY
        : Math.max(Math.min(since - this.trimmed, buffer.baseY), bottom - MATCH_ROWS, Math.min(from - this.trimmed, buffer.baseY), 0)
    const rows: string[] = []
    for (let index = first; index < bottom; index++) {
      const text = clean(buffer.getLine(index)?.translateToString(true) ?? '')
      const key = this.key(buffer, index)
      if ((buffer.type === 'normal' && key >= since) || (before ? before.get(key) !== text : index >= buffer.baseY)) rows.push(text)
    }
    return boundedTest(pattern, rows.join('\n'))
  }

  dispose(): void {
    if (this.final) return
    if (this.complaints > LOGGED_COMPLAINTS) this.options.log(`terminal emulator: ${this.complaints} complaints about malformed output in all`)
    this.final = { view: this.view(), end: this.trimmed + this.term.buffer.normal.baseY }
    this.held = []
    for (const resolve of this.flushes) resolve()
    this.flushes.clear()
    this.parsedListeners.clear()
    this.trimListener?.dispose()
    this.term.dispose()
  }
}
