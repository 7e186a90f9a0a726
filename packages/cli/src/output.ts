import type { Writable } from 'node:stream'

/** Colours are used only on a TTY and never with NO_COLOR set (https://no-color.org). */
export function useColor(stream: Writable & { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  return stream.isTTY === true
}

// eslint-disable-next-line no-control-regex -- matching the escape sequences this class writes
const ANSI = /\u001b\[\d+m/g
const codes = { dim: [2, 22], bold: [1, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const

/** Where a command writes: stdout for results, stderr for progress and diagnostics. */
export class Output {
  /** Styles are decided by stdout; lines written to a non-terminal stderr lose them again. */
  readonly color: boolean
  private readonly errorColor: boolean
  constructor(
    readonly out: Writable & { isTTY?: boolean } = process.stdout,
    readonly err: Writable & { isTTY?: boolean } = process.stderr,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.color = useColor(out, env)
    this.errorColor = useColor(err, env)
  }

  /** Wraps `text` in an ANSI style when colours are on. */
  style(name: keyof typeof codes, text: string): string {
    if (!this.color) return text
    const [open, close] = codes[name]
    return `\u001b[${open}m${text}\u001b[${close}m`
  }

  /** Writes raw text to stdout. */
  write(text: string): void {
    this.out.write(text)
  }

  /** Writes a line to stdout. */
  line(text = ''): void {
    this.out.write(text + '\n')
  }

  /** Writes one JSON value as a line to stdout (for `--json`). */
  json(value: unknown): void {
    this.out.write(JSON.stringify(value) + '\n')
  }

  /** Writes a diagnostic line to stderr. */
  error(text: string): void {
    this.err.write((this.color && !this.errorColor ? text.replace(ANSI, '') : text) + '\n')
  }
}

/** `1.2s` / `340ms`: a duration as people read it. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`
}

/** Shortens `text` to one line of at most `max` characters. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}
