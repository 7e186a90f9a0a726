import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, bench, describe } from 'vitest'
import { createTestContext, type TestContext } from '@cordage/testing'
import { Spill } from '../src/index.js'

// Spill of a 100 MB text result vs fs.writeFile of the same text. Time: in-process (vitest table) and
// per child process (medians below). Peak RSS: each side runs in its own process (built output, no
// TypeScript loader) and reports process.resourceUsage().maxRSS; `idle` is the same process without text.
const MB = 100
const here = dirname(fileURLToPath(import.meta.url))
const parent = mkdtempSync(join(tmpdir(), 'cordage-spill-bench-'))
const line = 'spill benchmark line: the quick brown fox jumps over the lazy dog 0123456789\n'
const text = line.repeat(Math.ceil((MB * 1_000_000) / line.length))
const bytes = Buffer.byteLength(text)
let ctx: TestContext
let call = 0
let encoded: Buffer | undefined

type Child = { mode: string; timesMs: number[]; baseRssBytes: number; maxRssBytes: number }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const mb = (value: number) => (value / 1e6).toFixed(0)

function child(mode: string, iterations: number): Child {
  const out = execFileSync(process.execPath, [join(here, 'bench-child.mjs'), mode, String(MB), String(iterations), parent], {
    cwd: join(here, '..'),
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  return JSON.parse(out)
}

beforeAll(async () => {
  // The child runs dist/: build this package only (its references are already built by `pnpm bench`).
  execFileSync(process.execPath, [join(here, '../../../node_modules/typescript/bin/tsc'), '-p', join(here, '../tsconfig.json')], { stdio: 'inherit' })
  const idle = child('idle', 0)
  const runs: Child[] = []
  // Interleave the sides so background load on the machine hits both alike.
  for (let round = 0; round < 5; round++) runs.push(child('spill', 3), child('writeFile', 3), child('writeBuffer', 3))
  const side = (mode: string) => {
    const picked = runs.filter((run) => run.mode === mode)
    return {
      medianMs: median(picked.flatMap((run) => run.timesMs)),
      peak: Math.max(...picked.map((run) => run.maxRssBytes)),
      base: median(picked.map((run) => run.baseRssBytes)),
    }
  }
  const spill = side('spill')
  const write = side('writeFile')
  const buffer = side('writeBuffer')
  console.log(
    [
      `spill of a ${mb(bytes)} MB text result (child processes, ${runs.length / 3} × 3 runs per side)`,
      `  time (median): spill ${spill.medianMs.toFixed(0)} ms; fs.writeFile(string) ${write.medianMs.toFixed(0)} ms → ${(spill.medianMs / write.medianMs).toFixed(2)}×; fs.writeFile(pre-encoded Buffer) ${buffer.medianMs.toFixed(0)} ms → ${(spill.medianMs / buffer.medianMs).toFixed(2)}× (target ≤ 1.3×)`,
      `  peak RSS: spill ${mb(spill.peak)} MB = ${(spill.peak / bytes).toFixed(2)}× the result (target ≤ 1.5×); writeFile(string) ${mb(write.peak)} MB = ${(write.peak / bytes).toFixed(2)}×; writeFile(Buffer) ${mb(buffer.peak)} MB = ${(buffer.peak / bytes).toFixed(2)}×`,
      `  above the text-holding baseline (${mb(spill.base)} MB; idle process ${mb(idle.maxRssBytes)} MB): spill +${mb(spill.peak - spill.base)} MB, writeFile(string) +${mb(write.peak - write.base)} MB, writeFile(Buffer) +${mb(buffer.peak - buffer.base)} MB (its Buffer included)`,
      `  growth over an idle process (the text itself included): spill ${((spill.peak - idle.maxRssBytes) / bytes).toFixed(2)}× the result, writeFile(Buffer) ${((buffer.peak - idle.maxRssBytes) / bytes).toFixed(2)}×`,
    ].join('\n'),
  )
  ctx = await createTestContext({ print: false })
  await ctx.plugin({
    name: 'bench-tool',
    inject: ['tools'],
    apply: (scoped) =>
      void scoped.tools.register({
        name: 'big',
        description: 'Returns the benchmark text.',
        parameters: { type: 'object' },
        output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value as string }] },
        execute: () => text,
      }),
  })
  await ctx.plugin(Spill, { dir: join(parent, 'spill') })
}, 600_000)

afterAll(() => rmSync(parent, { recursive: true, force: true }))

describe(`spill a ${MB} MB text result`, () => {
  bench(
    'registry + generic spill',
    async () => {
      const result = await ctx.tools.execute({ name: 'big', arguments: {}, callId: `call_${call++}` })
      const path = /Full output: (.+?)\. Read it/.exec(result.content[0]!.type === 'text' ? result.content[0]!.text : '')?.[1]
      if (!path) throw new Error('not spilled')
      await rm(path)
    },
    { iterations: 5, time: 0, warmupIterations: 1 },
  )

  bench(
    'fs.writeFile of the same text (baseline)',
    async () => {
      const path = join(parent, `baseline-${call++}.txt`)
      await writeFile(path, text)
      await rm(path)
    },
    { iterations: 5, time: 0, warmupIterations: 1 },
  )

  bench(
    'fs.writeFile of the text pre-encoded to a Buffer (baseline)',
    async () => {
      encoded ??= Buffer.from(text, 'utf8')
      const path = join(parent, `buffer-${call++}.txt`)
      await writeFile(path, encoded)
      await rm(path)
    },
    { iterations: 5, time: 0, warmupIterations: 1 },
  )
})
