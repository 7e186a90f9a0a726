import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bench } from 'vitest'
import { renderSessionHtml } from '../src/export.js'
import { launch, skipReason } from './chromium.js'
import { longSession } from './sessions.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const ROUNDS = 15

// In the page: the studio's view of every event, then the first frame after it (style, layout and paint),
// against the cheapest page of the same data (the events as one JSON text) measured the same way.
const MEASURE = `(async (variant) => {
  const data = JSON.parse(document.getElementById('cordage-session').textContent)
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)))
  const app = document.getElementById('app')
  app.replaceChildren()
  await frame()
  const start = performance.now()
  if (variant === 'studio') {
    const box = document.createElement('section')
    app.append(box)
    const view = new CordageStudio.SessionView(box, {})
    view.setHeader(data.session.header)
    view.addAll(data.session.events)
  } else {
    const pre = document.createElement('pre')
    pre.textContent = JSON.stringify(data.session.events, null, 2)
    app.append(pre)
  }
  document.body.offsetHeight
  await frame()
  return performance.now() - start
})`

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

bench.skipIf(skipReason)(
  'a 2 000-event session rendered in Chromium (target ≤ 500 ms)',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cordage-studio-bench-'))
    const browser = await launch()
    try {
      const file = join(dir, 'long.html')
      writeFileSync(file, renderSessionHtml(longSession(2000)))
      const page = await browser.context.newPage()
      const times: Record<string, number[]> = { studio: [], json: [], load: [] }
      for (let round = 0; round < ROUNDS; round++) {
        // The whole file opened from disk: parse, script, render, until the page is rendered.
        const started = Date.now()
        await page.goto(pathToFileURL(file).href)
        await page.waitForSelector('html[data-rendered="true"]')
        await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)))')
        times.load!.push(Date.now() - started)
        // Interleaved so machine noise hits both alike.
        for (const variant of round % 2 ? ['studio', 'json'] : ['json', 'studio'])
          times[variant]!.push((await page.evaluate(`${MEASURE}(${JSON.stringify(variant)})`)) as number)
      }
      const studio = median(times.studio!)
      const json = median(times.json!)
      console.log(`  2 000 events, ${ROUNDS} rounds in Chromium`)
      console.log(`  studio view, render to first frame   median ${studio.toFixed(1)} ms (target ≤ 500 ms)`)
      console.log(`  baseline: the events as one JSON text  median ${json.toFixed(1)} ms`)
      console.log(`  ratio ${(studio / json).toFixed(2)}×`)
      console.log(`  the whole file opened from disk       median ${median(times.load!).toFixed(0)} ms`)
    } finally {
      await browser.close()
      rmSync(dir, { recursive: true, force: true })
    }
  },
  once,
)
