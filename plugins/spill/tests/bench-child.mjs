// One side of the spill benchmark in its own process, so the peak RSS it reports is its own.
// Runs the built output (no TypeScript loader in memory): `node bench-child.mjs <mode> <MB> <iterations> <dir>`
// with mode `spill` (registry + generic spill), `writeFile` (fs.writeFile of the same text), `writeBuffer`
// (fs.writeFile of the text pre-encoded to a Buffer, encoding not timed) or `idle`.
// Prints { mode, bytes, timesMs, baseRssBytes, maxRssBytes } as one JSON line.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from 'cordis'
import { ToolRegistry } from '@cordage/registry'
import { Spill } from '../dist/index.js'

const [mode, megabytes, iterationsArg, parent] = process.argv.slice(2)
const iterations = Number(iterationsArg)
const dir = await mkdtemp(join(parent, 'cordage-spill-bench-'))
const ctx = new Context()
await ctx.plugin(ToolRegistry, {})
const line = 'spill benchmark line: the quick brown fox jumps over the lazy dog 0123456789\n'
const text = mode === 'idle' ? '' : line.repeat(Math.ceil((Number(megabytes) * 1_000_000) / line.length))
// Flattens the rope `repeat` builds, so both sides start from the same flat one-byte string.
const bytes = Buffer.byteLength(text)
const baseRssBytes = process.resourceUsage().maxRSS * 1024
const times = []

if (mode === 'spill') {
  await ctx.plugin({
    name: 'bench-tool',
    inject: ['tools'],
    apply: (scoped) =>
      void scoped.tools.register({
        name: 'big',
        description: 'Returns the benchmark text.',
        parameters: { type: 'object' },
        output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
        execute: () => text,
      }),
  })
  await ctx.plugin(Spill, { dir: join(dir, 'spill') })
  for (let i = 0; i < iterations; i++) {
    const start = performance.now()
    const result = await ctx.tools.execute({ name: 'big', arguments: {}, callId: `call_${i}` })
    times.push(performance.now() - start)
    const path = /Full output: (.+?)\. Read it/.exec(result.content[0].text)?.[1]
    if (!path) throw new Error('the result was not spilled')
    await rm(path)
  }
} else if (mode === 'writeFile' || mode === 'writeBuffer') {
  const data = mode === 'writeBuffer' ? Buffer.from(text, 'utf8') : text
  for (let i = 0; i < iterations; i++) {
    const path = join(dir, `out-${i}.txt`)
    const start = performance.now()
    await writeFile(path, data)
    times.push(performance.now() - start)
    await rm(path)
  }
}
await rm(dir, { recursive: true, force: true })
process.stdout.write(JSON.stringify({ mode, bytes, timesMs: times, baseRssBytes, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\n')
