import { PassThrough } from 'node:stream'
import { bench, describe } from 'vitest'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { LineTransport } from '../src/stdio.js'

// The SDK's stdio transport (baseline) against LineTransport, reading the same bytes in 64 KiB pipe-sized
// chunks: many small tools/call frames, and one 5 MiB frame (large arguments).
const CHUNK = 64 * 1024
const frame = (id: number, text: string) => JSON.stringify({ method: 'tools/call', params: { name: 'echo', arguments: { text } }, jsonrpc: '2.0', id }) + '\n'
const split = (text: string) => {
  const bytes = Buffer.from(text)
  const chunks: Buffer[] = []
  for (let offset = 0; offset < bytes.length; offset += CHUNK) chunks.push(bytes.subarray(offset, offset + CHUNK))
  return chunks
}
const small = split(Array.from({ length: 2_000 }, (_, index) => frame(index, 'x'.repeat(150))).join(''))
const large = split(frame(1, 'y'.repeat(5 * 1024 * 1024)))

/** Feeds `chunks` to a fresh transport and resolves once it delivered `expected` messages. */
async function feed(make: (stdin: PassThrough) => Transport, chunks: Buffer[], expected: number): Promise<void> {
  const stdin = new PassThrough()
  const transport = make(stdin)
  let count = 0
  const done = new Promise<void>((resolve) => {
    // oxlint-disable-next-line unicorn/prefer-add-event-listener
    transport.onmessage = () => {
      if (++count === expected) resolve()
    }
  })
  await transport.start()
  for (const chunk of chunks) stdin.write(chunk)
  await done
  await transport.close()
}

const sdk = (stdin: PassThrough) => new StdioServerTransport(stdin, new PassThrough())
const line = (stdin: PassThrough) => new LineTransport(stdin, new PassThrough())
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN
const ms = (value: number) => `${value.toFixed(2)} ms`

/** Timed `feed` of both transports per iteration, order alternating; prints the medians after the run. */
function paired(label: string, chunks: Buffer[], expected: number) {
  const samples = { sdk: [] as number[], line: [] as number[], ratio: [] as number[] }
  let round = 0
  const time = async (make: (stdin: PassThrough) => Transport) => {
    const start = performance.now()
    await feed(make, chunks, expected)
    return performance.now() - start
  }
  bench(
    `${label}: SDK StdioServerTransport and LineTransport, order alternating`,
    async () => {
      const first = round++ & 1 ? line : sdk
      const a = await time(first)
      const b = await time(first === sdk ? line : sdk)
      const [baseline, ours] = first === sdk ? [a, b] : [b, a]
      samples.sdk.push(baseline)
      samples.line.push(ours)
      samples.ratio.push(ours / baseline)
    },
    {
      time: 3_000,
      warmupTime: 300,
      setup: (_task, mode) => {
        if (mode === 'run') for (const list of Object.values(samples)) list.length = 0
      },
      // Bench mode runs no afterAll hooks: report after the measured run.
      teardown: (_task, mode) => {
        if (mode !== 'run') return
        process.stdout.write(
          `\n${label} (${samples.ratio.length} pairs): SDK median ${ms(median(samples.sdk))}, LineTransport median ${ms(median(samples.line))}; median per-pair ratio LineTransport/SDK ${median(samples.ratio).toFixed(3)}\n`,
        )
      },
    },
  )
}

describe('stdio transports', () => {
  paired('2 000 small frames', small, 2_000)
  paired('one 5 MiB frame', large, 1)
})
