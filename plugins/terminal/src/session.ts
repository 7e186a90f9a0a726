import { constants } from 'node:os'
import type { IPty } from 'node-pty'
import { ProcessTree, readProcess } from '@cordage/process'
import { TerminalSignalError, TerminalSpawnError } from './errors.js'
import type { PtyModule } from './pty.js'
import { Screen } from './screen.js'
import type { SessionSnapshot } from './schemas.js'
import { waitForOutput, type WaitOutcome, type WaitRequest } from './wait.js'
import { errorMessage } from '@cordage/core'

/** What opening a session needs. */
export interface SessionOptions {
  id: string
  owner: string | null
  file: string
  args: string[]
  /** What the session runs, as shown to the model. */
  command: string
  cwd: string
  env: Record<string, string>
  cols: number
  rows: number
  scrollback: number
  killGraceMs: number
  /** node-pty, loaded by the plugin. */
  pty: PtyModule
  /** The host's debug log (the emulator's complaints about malformed output). */
  log(message: string): void
  /** Called once when the program exits on its own (not when the session is closed). */
  onExit(session: TerminalSession): void
}

const signalNames = new Map<number, string>(Object.entries(constants.signals).map(([name, number]) => [number, name]))

// A hung-up terminal: interactive shells ignore SIGTERM but not SIGHUP; SIGCONT lets stopped jobs act on them.
const CLOSE_SIGNALS: NodeJS.Signals[] = ['SIGHUP', 'SIGTERM', 'SIGCONT']

/**
 * One live terminal: a program on a pseudo-terminal whose output feeds a headless emulator. Closing it
 * (or unloading, or the process exiting) kills every process it started — its session, their
 * descendants, and whatever carries its process-tree marker (`setsid` children whose parent is gone).
 */
export class TerminalSession {
  readonly screen: Screen
  readonly startedAt = new Date()
  /** Settles when the program exits. */
  readonly ended: Promise<void>
  /** Settles once the program exited and whatever it left behind has been killed. */
  readonly reaped: Promise<void>
  state: 'running' | 'exited' = 'running'
  exitCode: number | null = null
  signal: string | null = null
  endedAt: Date | null = null
  /** `Date.now()` of the last tool call naming this session. */
  usedAt = Date.now()
  sending = false
  private closing: Promise<void> | undefined
  private readonly terminal: IPty
  private readonly tree = new ProcessTree()

  constructor(readonly options: SessionOptions) {
    let terminal: IPty | undefined
    this.screen = new Screen({
      cols: options.cols,
      rows: options.rows,
      scrollback: options.scrollback,
      onPressure: (pause) => (pause ? terminal?.pause() : terminal?.resume()),
      log: options.log,
    })
    try {
      terminal = options.pty.spawn(options.file, options.args, {
        name: 'xterm-256color',
        cols: options.cols,
        rows: options.rows,
        cwd: options.cwd,
        env: this.tree.environment(options.env),
        // Bytes, not strings: the emulator decodes UTF-8 itself, so node-pty need not decode (and then the
        // emulator re-encode) every chunk.
        encoding: null,
      })
    } catch (error) {
      this.screen.dispose()
      throw new TerminalSpawnError(`could not start ${options.command} in ${options.cwd}: ${errorMessage(error)}`)
    }
    this.terminal = terminal
    this.tree.adopt(terminal.pid)
    // With `encoding: null` node-pty hands over Buffers, although its types say strings.
    terminal.onData((data) => this.screen.write(data as unknown as Buffer))
    let ended!: () => void
    this.ended = new Promise((resolve) => (ended = resolve))
    this.reaped = new Promise((resolve) => {
      terminal.onExit(({ exitCode, signal }) => {
        this.state = 'exited'
        this.endedAt = new Date()
        this.signal = signal ? (signalNames.get(signal) ?? String(signal)) : null
        this.exitCode = this.signal ? null : exitCode
        // Whatever the program left behind (`sleep 1000 &`, `setsid cmd &` in a shell) dies with it.
        void this.kill().then(
          () => resolve(),
          () => resolve(),
        )
        ended()
        if (!this.closing) options.onExit(this)
      })
    })
  }

  get id(): string {
    return this.options.id
  }

  get pid(): number {
    return this.terminal.pid
  }

  /** The public snapshot: no owner, no internals. */
  snapshot(): SessionSnapshot {
    return {
      id: this.id,
      command: this.options.command,
      cwd: this.options.cwd,
      pid: this.pid,
      cols: this.options.cols,
      rows: this.options.rows,
      state: this.state,
      exitCode: this.exitCode,
      signal: this.signal,
      title: this.screen.title,
      startedAt: this.startedAt.toISOString(),
      endedAt: this.endedAt?.toISOString() ?? null,
    }
  }

  /** Writes `input` (keys as typed: `\r` is Enter, `\u0003` Ctrl-C) and waits as asked. */
  async send(input: string, request: WaitRequest, signal: AbortSignal): Promise<{ since: number; outcome: WaitOutcome }> {
    // Parse what already arrived first, so the send's rows start at the cursor as the user last saw it.
    await this.screen.flush()
    const since = this.screen.cursorRow()
    const waiting = waitForOutput(this, since, request, signal, input === '' ? undefined : this.screen.rows())
    if (input) this.terminal.write(input)
    return { since, outcome: await waiting }
  }

  /** Ends every process of the session: SIGHUP, SIGTERM and SIGCONT, then SIGKILL after the grace. */
  private kill(): Promise<boolean> {
    return this.tree.terminate({ signals: CLOSE_SIGNALS, graceMs: this.options.killGraceMs })
  }

  /** Delivers a signal to the terminal's foreground process group; returns that group's id. */
  deliver(name: NodeJS.Signals): number {
    const foreground = readProcess(this.pid)?.terminalGroup ?? 0
    const group = foreground > 0 ? foreground : this.pid
    try {
      process.kill(-group, name)
    } catch (error) {
      throw new TerminalSignalError(
        `could not send ${name} to process group ${group} of ${this.id}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}; the program may have just exited (check with terminal_read)`,
      )
    }
    return group
  }

  /** Kills every process of the session and frees the emulator; resolves once nothing is left. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.state === 'running') await this.kill()
      // The exit event follows the kill within node-pty's socket-close delay.
      let timer: NodeJS.Timeout | undefined
      await Promise.race([this.reaped, new Promise((resolve) => (timer = setTimeout(resolve, 3000)))])
      clearTimeout(timer)
      this.screen.dispose()
    })()
    return this.closing
  }

  /** For `process.on('exit')`: SIGKILL everything now, synchronously. */
  killNow(): void {
    this.tree.killNow()
  }
}
