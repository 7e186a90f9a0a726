import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bin } from './helpers.js'

/** tmux is how these tests get a real pseudo-terminal; without it they are skipped. */
export const hasTmux = spawnSync('tmux', ['-V']).status === 0

let sessions = 0

/** `cordage …` running in a detached tmux pane of its own server (a private socket), 120x40. */
export class Terminal {
  private readonly socket = `cordage-test-${process.pid}-${++sessions}`
  private readonly exitFile: string

  constructor(
    readonly cwd: string,
    args: string[],
  ) {
    this.exitFile = join(cwd, `.exit-${sessions}`)
    const quoted = [process.execPath, bin, ...args].map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ')
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
    for (const key of ['OPENAI_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_BASE_URL', 'CORDAGE_MODEL']) delete env[key]
    this.tmux(['new-session', '-d', '-s', 'main', '-x', '120', '-y', '40', '-c', cwd, `${quoted}; echo $? > '${this.exitFile}'; sleep 600`], env)
  }

  /** The visible screen, blank lines dropped. */
  screen(): string {
    return this.tmux(['capture-pane', '-p', '-J', '-t', 'main'])
      .split('\n')
      .filter((line) => line.trim())
      .join('\n')
  }

  /** Waits (polling, wide timeout: the machine is shared) until the screen matches. */
  async waitFor(pattern: RegExp, timeoutMs = 40_000): Promise<string> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const screen = this.screen()
      if (pattern.test(screen)) return screen
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; the screen shows:\n${screen}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  /** Sends tmux key names (`Down`, `Enter`, `C-c`, `Space`) or literal text. */
  keys(...keys: string[]): void {
    this.tmux(['send-keys', '-t', 'main', ...keys])
  }

  /** Resolves to the command's exit code once it ended. */
  async exitCode(timeoutMs = 40_000): Promise<number> {
    const deadline = Date.now() + timeoutMs
    while (!existsSync(this.exitFile) || !readFileSync(this.exitFile, 'utf8').trim()) {
      if (Date.now() > deadline) throw new Error(`the command did not exit; the screen shows:\n${this.screen()}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return Number(readFileSync(this.exitFile, 'utf8').trim())
  }

  /** Stops this test's tmux server (and the command, if it still runs). */
  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'])
  }

  private tmux(args: string[], env?: NodeJS.ProcessEnv): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', ...(env && { env }) })
  }
}
