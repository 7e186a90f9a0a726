import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { bin } from './helpers.js'

/** Live (non-zombie) processes whose command line contains `marker`, read from /proc. */
export function processesWith(marker: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (!cmdline.includes(marker)) continue
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(entry))
    } catch {
      // The process ended while being read.
    }
  }
  return found
}

/** A bash command starting `count` sleepers tagged with a unique marker (a fractional sleep length). */
export function sleepers(count: number): { command: string; marker: string } {
  const marker = `4321.${Math.floor(Math.random() * 1e9)}`
  return { command: `for i in $(seq ${count}); do sleep ${marker} & done; echo started; wait`, marker }
}

/** A running `cordage` child with its output collected. */
export interface Running {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Spawns the built `cordage` with pipes (stdin left open unless `input` is given). */
export function start(args: string[], cwd: string, input?: string, extraEnv: Record<string, string> = {}): Running {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`)
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extraEnv }
  for (const key of ['OPENAI_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_BASE_URL', 'CORDAGE_MODEL']) delete env[key]
  const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  if (input !== undefined) child.stdin!.write(input)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Polls until `check` holds or `timeoutMs` passes; returns whether it held. */
export async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}
