import { spawn } from 'node:child_process'
import { rgPath } from '@vscode/ripgrep'
import { createTestContext } from '@cordage/testing'
import * as fs from './dist/index.js'
const base = process.argv[2]
const ctx = await createTestContext({ print: false })
await ctx.plugin(fs.default ?? fs, { root: base, maxResults: 100_000 })
const { execute } = ctx.tools
const run = () => new Promise((resolve, reject) => { const child = spawn(rgPath, ['-n', '--no-require-git', 'export function \\w+'], { cwd: base + '/pnpm', stdio: ['ignore', 'pipe', 'ignore'] }); child.stdout.on('data', () => {}); child.on('error', reject); child.on('close', resolve) })
const tool = async () => { const r = await execute({ name: 'grep', arguments: { pattern: 'export function \\w+', path: 'pnpm' } }); if (r.isError) throw new Error(r.error.message) }
for (let i = 0; i < 3; i++) { await run(); await tool() }
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1]
const R = [], T = [], RC = [], TC = []
for (let i = 0; i < Number(process.argv[3] ?? 9); i++) {
  let c = process.cpuUsage(), s = performance.now(); await run(); R.push(performance.now() - s); c = process.cpuUsage(c); RC.push((c.user + c.system) / 1000)
  c = process.cpuUsage(); s = performance.now(); await tool(); T.push(performance.now() - s); c = process.cpuUsage(c); TC.push((c.user + c.system) / 1000)
}
console.log(`rg ${med(R).toFixed(1)} ms (cpu ${med(RC).toFixed(1)}) tool ${med(T).toFixed(1)} ms (cpu ${med(TC).toFixed(1)}) ratio ${(med(T) / med(R)).toFixed(2)}`)
process.exit(0)
