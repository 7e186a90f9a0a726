import * as pty from 'node-pty'
import { bench } from 'vitest'
import { compare } from '@cordage/testing'
import { setup } from './helpers.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

/**
 * The baseline: a raw node-pty shell; write a line and resolve when `marker` shows in its output. Commands
 * quote their marker (`echo r''1` prints `r1`) so the echoed command line cannot match it.
 */
function rawShell() {
  const shell = pty.spawn('bash', ['--noprofile', '--norc', '-i'], { cols: 120, rows: 40, env: { ...process.env, PS1: 'P> ' } })
  let buffer = ''
  let waiter: { marker: string; resolve: () => void } | undefined
  shell.onData((data) => {
    // Only a short tail is searched, so a 20 MB stream costs the baseline nothing but reading it.
    buffer = (buffer + data).slice(-4096)
    if (waiter && buffer.includes(waiter.marker)) {
      buffer = ''
      const done = waiter
      waiter = undefined
      done.resolve()
    }
  })
  return {
    run: (input: string, marker: string) =>
      new Promise<void>((resolve) => {
        waiter = { marker, resolve }
        shell.write(input)
      }),
    kill: () => shell.kill('SIGKILL'),
  }
}

bench(
  '(a) one command round trip: terminal_send with waitFor vs a raw node-pty shell',
  async () => {
    const { call, open } = await setup()
    const { session } = await open({ env: { PS1: 'P> ' } })
    const raw = rawShell()
    await raw.run("echo re''ady\r", 'ready\r\n')
    let n = 0
    const result = await compare(
      '(a) `echo <n>` and wait for its output',
      { name: 'raw node-pty, string search', fn: () => raw.run(`echo r''${++n}\r`, `r${n}\r\n`) },
      [{ name: 'terminal_send (emulator, waitFor, view, render)', fn: () => call('send', { id: session.id, input: `echo t${++n}\r`, waitFor: `^t${n}$` }) }],
      { iterations: 20, rounds: 9, warmup: 5, unit: 'ms' },
    )
    const [raw0, tool0] = Object.values(result)
    console.log(`  terminal_send round trip: overhead ${((tool0! - raw0!) / 1000).toFixed(2)} ms over raw node-pty (target ≤ 1 ms)`)
    raw.kill()
  },
  once,
)

bench(
  '(b) 20 MB of output: parsed by the emulator vs discarded',
  async () => {
    const { call, open } = await setup({ rows: 40 })
    const { session } = await open({ env: { PS1: 'P> ' } })
    const raw = rawShell()
    await raw.run("echo re''ady\r", 'ready\r\n')
    const command = (tag: string) => `head -c 20000000 /dev/zero | tr '\\0' 'a' | fold -w 100; echo; echo ${tag}'-'done\r`
    const result = await compare(
      '(b) 20 MB through the pty',
      { name: 'raw node-pty, output discarded', fn: () => raw.run(command('raw'), 'raw-done\r\n') },
      [
        {
          name: 'terminal_send (xterm parses every byte)',
          fn: () => call('send', { id: session.id, input: command('term'), waitFor: '^term-done$', waitForMs: 120_000 }),
        },
      ],
      { iterations: 1, rounds: 5, warmup: 1, unit: 'ms' },
    )
    const [raw1, tool1] = Object.values(result)
    console.log(`  terminal_send 20 MB through the emulator: ratio ${(tool1! / raw1!).toFixed(2)}× (target ≤ 1.5×)`)
    raw.kill()
  },
  once,
)
